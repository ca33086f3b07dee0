"""A real HTTP package index on 127.0.0.1 serving small wheels (and an sdist) built here from source text.

Each wheel carries incompressible padding stored between its modules, so reading only the members
wanted needs range requests; the server logs every request and the bytes it sent.
"""

from __future__ import annotations

import io
import random
import re
import tarfile
import threading
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

import pytest

from tests.support.loopback import byte_range, serving

TRANSFORMERS_INIT = '''
from typing import TYPE_CHECKING
from .utils import _LazyModule, is_torch_available
_import_structure = {"trainer": ["Trainer"], "training_args": ["TrainingArguments"], "generation": []}
if is_torch_available():
    _import_structure["generation"].extend(["GenerationMixin"%s])
    _import_structure["models.llama"] = ["LlamaConfig"]
if TYPE_CHECKING:
    from .trainer import Trainer
else:
    import sys
    sys.modules[__name__] = _LazyModule(__name__, globals()["__file__"], _import_structure)
'''
GENERATION = '''
from .utils import GenerationMixin
%s
__all__ = ["GenerationMixin"%s]
'''
TOP_K = '''
def top_k_top_p_filtering(logits, top_k=0, top_p=1.0, filter_value=-float("Inf"), min_tokens_to_keep=1):
    return logits
'''
TRAINER = '''
import torch
from .training_args import TrainingArguments
try:
    import accelerate
    from accelerate import Accelerator
except ImportError:
    pass

class Trainer:
    def __init__(self, model=None, args=None, %s):
        pass
    def train(self, resume_from_checkpoint=None, **kwargs):
        from peft import PeftModel
    def _get_train_sampler(self):
        pass
'''
TRAINING_ARGS = '''
from dataclasses import dataclass, field
from typing import ClassVar

@dataclass
class TrainingArguments:
    framework: ClassVar[str] = "pt"
    output_dir: str = None
    learning_rate: float = 5e-5
    _n_gpu: int = field(init=False, default=-1)
'''
LLAMA_CONFIG = '''
class LlamaConfig:
    model_type = "llama"
'''
AUTO = '''
from collections import OrderedDict
CONFIG_MAPPING_NAMES = OrderedDict([("llama", "LlamaConfig"), ("qwen2", "Qwen2Config")%s])
'''
TRL_CORE = '''
import torch
from transformers import top_k_top_p_filtering
from transformers.generation import GenerationMixin as Mixin
'''
TRL_CORE_NEW = '''
import torch
'''
TRL_INIT = '''
__all__ = ["GRPOConfig", "PPOTrainer"]
from .trainer.grpo_config import GRPOConfig
from .trainer.ppo import PPOTrainer
'''
TRL_GRPO = '''
from dataclasses import dataclass
from transformers import TrainingArguments

@dataclass
class GRPOConfig(TrainingArguments):
    use_vllm: bool = False
'''
TRL_PPO = '''
class PPOTrainer:
    def step(self, queries, responses, scores):
        pass
'''
TRL_CLI = '''
import argparse
def main():
    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    subparsers.add_parser("sft")
%s
'''
ENTRY_POINTS = "[console_scripts]\ntrl = trl.cli:main\n"


def _wheel(name: str, version: str, files: dict[str, str], entry_points: str | None = None) -> bytes:
    buf = io.BytesIO()
    rng = random.Random(f"{name}{version}")
    with zipfile.ZipFile(buf, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text, compress_type=zipfile.ZIP_DEFLATED)
            zf.writestr(f"{path}.bin", rng.randbytes(400_000), compress_type=zipfile.ZIP_STORED)
        dist = f"{name}-{version}.dist-info"
        zf.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        if entry_points:
            zf.writestr(f"{dist}/entry_points.txt", entry_points)
        zf.writestr(f"{dist}/RECORD", "")
    return buf.getvalue()


def _sdist(name: str, version: str, files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}-{version}/{path}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def transformers_files(version: str) -> dict[str, str]:
    old = version == "4.38.0"
    return {
        "transformers/__init__.py": TRANSFORMERS_INIT % (', "top_k_top_p_filtering"' if old else ""),
        "transformers/utils/__init__.py": "class GenerationMixin:\n    pass\nclass _LazyModule:\n    pass\n"
        "def is_torch_available():\n    return True\n",
        "transformers/generation/__init__.py": GENERATION % (TOP_K if old else "", ', "top_k_top_p_filtering"' if old else ""),
        "transformers/trainer.py": TRAINER % ("tokenizer=None" if old else "processing_class=None"),
        "transformers/training_args.py": TRAINING_ARGS,
        "transformers/models/__init__.py": "",
        "transformers/models/llama/__init__.py": "from .configuration_llama import LlamaConfig\n",
        "transformers/models/llama/configuration_llama.py": LLAMA_CONFIG,
        "transformers/models/auto/configuration_auto.py": AUTO % ("" if old else ', ("qwen3", "Qwen3Config")'),
    }


def trl_files(version: str) -> dict[str, str]:
    old = version == "0.7.10"
    return {
        "trl/__init__.py": TRL_INIT,
        "trl/core.py": TRL_CORE if old else TRL_CORE_NEW,
        "trl/trainer/__init__.py": "",
        "trl/trainer/grpo_config.py": TRL_GRPO,
        "trl/trainer/ppo.py": TRL_PPO,
        "trl/cli.py": TRL_CLI % ("" if old else '    subparsers.add_parser("vllm-serve")'),
    }


@dataclass
class ApiIndex:
    files: dict[str, bytes] = field(default_factory=dict)
    """File name -> bytes served under /files/."""
    log: list[tuple[str, str, int]] = field(default_factory=list)
    """(path, Range header, bytes sent)."""
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    stall: threading.Event | None = None
    """When set to an Event: every file request waits for it (at most 10 s) before its answer, as a stuck server."""

    def add_wheel(self, name: str, version: str, files: dict[str, str], entry_points: str | None = None) -> None:
        self.files[f"{name}-{version}-py3-none-any.whl"] = _wheel(name, version, files, entry_points)

    def add_sdist(self, name: str, version: str, files: dict[str, str]) -> None:
        self.files[f"{name}-{version}.tar.gz"] = _sdist(name, version, files)

    def sent(self, needle: str = "") -> int:
        with self.lock:
            return sum(n for path, _, n in self.log if needle in path)

    def requests(self, needle: str = "") -> int:
        with self.lock:
            return sum(needle in path for path, _, _ in self.log)

    def page(self, project: str) -> bytes | None:
        names = [f for f in sorted(self.files) if f.split("-")[0].replace("_", "-") == project]
        if not names:
            return None
        links = "".join(f'<a href="../../files/{f}">{f}</a>\n' for f in names)
        return f"<html><body>{links}</body></html>".encode()


def _handler(index: ApiIndex):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            status, body, extra = self._route()
            # Recorded before the answer: a client that has its answer finds its request in the log.
            with index.lock:
                index.log.append((self.path, self.headers.get("Range", ""), len(body)))
            if index.stall is not None and self.path.startswith("/files/"):
                index.stall.wait(10)
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            for k, v in extra.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _route(self) -> tuple[int, bytes, dict[str, str]]:
            m = re.fullmatch(r"/simple/([\w.-]+)/", self.path)
            if m:
                body = index.page(m.group(1))
                return (200, body, {"Content-Type": "text/html"}) if body else (404, b"", {})
            m = re.fullmatch(r"/files/([^/]+)", self.path)
            whole = index.files.get(m.group(1)) if m else None
            if whole is None:
                return 404, b"", {}
            rng = self.headers.get("Range", "")
            if not rng:
                return 200, whole, {}
            part, headers = byte_range(whole, rng)
            return 206, part, headers

    return Handler


@pytest.fixture
def api_index():
    index = ApiIndex()
    with serving(_handler(index)) as base:
        index.url = f"{base}/simple/"
        yield index
