"""The ast extractor on source written like the real packages' (recorded shapes), and the range zip reader."""

from __future__ import annotations

import io
import random
import zipfile
import zlib

import pytest

from compat.errors import PackageIndexError
from compat.maintain.remote_zip import Member, RemoteZip
from compat.timeline.combine import combine
from compat.timeline.extract import ModuleInfo, extract_module, module_name
from compat.timeline.records import ApiKind

ROOTS = ("transformers", "trl", "vllm", "torch", "peft", "liger_kernel", "accelerate")


def release(package: str, files: dict[str, str], **kw) -> tuple[dict[ApiKind, set[str]], set[str]]:
    modules: dict[str, ModuleInfo] = {}
    for path, text in files.items():
        named = module_name(path)
        assert named is not None
        modules[named[0]] = extract_module(text.encode(), *named)
    own = kw.pop("own", None) or (package.replace("-", "_"),)
    api = combine(package, modules, own=own, tracked_roots=ROOTS, **kw)
    return api.keys, api.imports


def test_define_import_structure_collects_the_all_of_the_modules_below():
    # transformers >= 4.4x model packages and the 5.x top level
    keys, _ = release("transformers", {
        "transformers/__init__.py": (
            "from pathlib import Path\n_import_structure = {'trainer': ['Trainer']}\n"
            "import_structure = define_import_structure(Path(__file__).parent / 'models', prefix='models')\n"
        ),
        "transformers/trainer.py": "class Trainer:\n    pass\n",
        "transformers/models/__init__.py": "import sys\nsys.modules[__name__] = _LazyModule(__name__, _file, define_import_structure(_file))\n",
        "transformers/models/llama/__init__.py": "_file = globals()['__file__']\nx = define_import_structure(_file)\n",
        "transformers/models/llama/modeling_llama.py": (
            "class LlamaForCausalLM:\n    def forward(self, input_ids=None, *, labels=None):\n        pass\n"
            "class LlamaMLP:\n    pass\n__all__ = ['LlamaForCausalLM']\n"
        ),
    })
    names = keys[ApiKind.NAME]
    assert {"transformers:Trainer", "transformers:LlamaForCausalLM", "transformers.models:LlamaForCausalLM",
            "transformers.models.llama:LlamaForCausalLM"} <= names
    assert "transformers:LlamaMLP" not in names
    # parameters are keyed under the shortest public module exposing the class
    assert "transformers:LlamaForCausalLM.forward(labels)" in keys[ApiKind.PARAM]
    assert "transformers.models.llama.modeling_llama:LlamaMLP(**)" not in keys[ApiKind.PARAM]


def test_huggingface_hub_lazy_attach_table():
    keys, _ = release("huggingface-hub", {
        "huggingface_hub/__init__.py": (
            "_SUBMOD_ATTRS = {'file_download': ['cached_download', 'hf_hub_download'], 'hf_api': ['HfApi']}\n"
            "__getattr__, __dir__, __all__ = _attach(__name__, submodules=[], submod_attrs=_SUBMOD_ATTRS)\n"
        ),
        "huggingface_hub/file_download.py": "def cached_download(url, force_filename=None):\n    pass\n",
        "huggingface_hub/hf_api.py": "class HfApi:\n    def rename_discussion(self, repo_id, new_title):\n        pass\n",
    }, own=("huggingface_hub",))
    assert {"huggingface_hub:cached_download", "huggingface_hub:HfApi"} <= keys[ApiKind.NAME]
    assert {"huggingface_hub:cached_download(force_filename)", "huggingface_hub:HfApi.rename_discussion(new_title)"} <= keys[ApiKind.PARAM]
    # 0.8 and 0.9 pass the table inline
    keys, _ = release("huggingface-hub", {
        "huggingface_hub/__init__.py": "__getattr__, __dir__, __all__ = _attach(__name__, submodules=[], submod_attrs={'hf_api': ['HfApi']})\n",
        "huggingface_hub/hf_api.py": "class HfApi:\n    pass\n",
    }, own=("huggingface_hub",))
    assert "huggingface_hub:HfApi" in keys[ApiKind.NAME]


def test_module_getattr_tables_and_star_imports():
    # vLLM's top level answers names through __getattr__ and MODULE_ATTRS
    keys, _ = release("vllm", {
        "vllm/__init__.py": (
            "MODULE_ATTRS = {'LLM': '.entrypoints.llm:LLM', 'SamplingParams': '.sampling_params:SamplingParams'}\n"
            "def __getattr__(name):\n    if name in MODULE_ATTRS:\n        pass\n    if name == 'old_name':\n        pass\n"
            "    if name in ('a_b', 'c_d'):\n        pass\n"
            "from .version import *\n"
        ),
        "vllm/version.py": "__version__ = '1'\nversion_tuple = (1,)\n_private = 2\nhidden = 3\n__all__ = ['version_tuple']\n",
        "vllm/entrypoints/__init__.py": "",
        "vllm/entrypoints/llm.py": "class LLM:\n    def __init__(self, model, **kwargs):\n        pass\n"
        "    def generate(self, prompts=None, prompt_token_ids=None):\n        pass\n",
        "vllm/sampling_params.py": "class SamplingParams:\n    pass\n",
        "vllm/model_executor/models/registry.py": (
            "_TEXT_GENERATION_MODELS = {'LlamaForCausalLM': ('llama', 'LlamaForCausalLM'), 'not an arch': 1}\n"
            "_VLLM_MODELS = {**_TEXT_GENERATION_MODELS}\n"
        ),
    })
    names = keys[ApiKind.NAME]
    assert {"vllm:LLM", "vllm:SamplingParams", "vllm:old_name", "vllm:a_b", "vllm:version_tuple"} <= names
    assert "vllm:_private" not in names and "vllm:hidden" not in names
    assert {"vllm:LLM(model)", "vllm:LLM(**)", "vllm:LLM.generate(prompt_token_ids)"} <= keys[ApiKind.PARAM]
    assert keys[ApiKind.MODEL_TYPE] == {"LlamaForCausalLM"}


def test_imports_are_top_level_guarded_or_lazy():
    _, imports = release("trl", {
        "trl/__init__.py": "",
        "trl/core.py": (
            "from typing import TYPE_CHECKING\nimport torch.nn as nn\nfrom transformers import top_k_top_p_filtering\n"
            "if TYPE_CHECKING:\n    from vllm import LLM\n"
            "try:\n    from peft import PeftModel\nexcept ImportError:\n    from peft.x import Y\nfinally:\n    import accelerate\n"
            "if is_vllm_available():\n    from vllm import SamplingParams\nelse:\n    from vllm.other import Z\n"
            "with suppress(ImportError):\n    import liger_kernel\n"
            "class A:\n    from transformers import Trainer\n    def f(self):\n        from vllm import LLM as L\n"
            "def g():\n    import transformers.generation\n"
            "from . import utils\nfrom .. import nothing\n"
        ),
        "trl/utils.py": "",
    })
    assert imports == {
        "trl.core torch.nn * top_level",
        "trl.core transformers top_k_top_p_filtering top_level",
        "trl.core peft PeftModel guarded",
        "trl.core peft.x Y guarded",
        "trl.core accelerate * top_level",
        "trl.core vllm SamplingParams guarded",
        "trl.core vllm.other Z guarded",
        "trl.core liger_kernel * top_level",
        "trl.core transformers Trainer top_level",
        "trl.core vllm LLM lazy",
        "trl.core transformers.generation * lazy",
    }


def test_cli_subcommands_from_parsers_classes_and_lists():
    entry = "[console_scripts]\nvllm = vllm.entrypoints.cli.main:main\nother = vllm.tools:run\n"
    keys, _ = release("vllm", {
        "vllm/__init__.py": "",
        "vllm/tools.py": "def run():\n    pass\n",
        "vllm/entrypoints/__init__.py": "",
        "vllm/entrypoints/cli/__init__.py": "",
        "vllm/entrypoints/cli/main.py": "def main():\n    sub.add_parser('chat')\n",
        "vllm/entrypoints/cli/serve.py": "class ServeSubcommand(CLISubcommand):\n    name = 'serve'\n",
        "vllm/entrypoints/cli/typer_app.py": "app.command(name='bench')(f)\napp.command('complete')(g)\n",
        "vllm/entrypoints/cli/legacy.py": "SUPPORTED_COMMANDS = ['env']\n",
    }, entry_points=entry, scripts=["vllm-helper"])
    assert keys[ApiKind.CLI] == {"vllm", "other", "vllm-helper", "vllm chat", "vllm serve", "vllm bench", "vllm complete", "vllm env"}
    keys, _ = release("vllm", {"vllm/__init__.py": ""}, entry_points="[console_scripts\nbroken")
    assert keys[ApiKind.CLI] == set()


def test_model_type_tables_of_peft_and_liger_kernel():
    keys, _ = release("peft", {
        "peft/__init__.py": "",
        "peft/utils/constants.py": "TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING = {'llama': ['q_proj'], 'qwen2': []}\n",
    })
    assert keys[ApiKind.MODEL_TYPE] == {"llama", "qwen2"}
    keys, _ = release("liger-kernel", {
        "liger_kernel/__init__.py": "",
        "liger_kernel/transformers/monkey_patch.py": "MODEL_TYPE_TO_APPLY_LIGER_FN = dict({'gemma': f, 'qwen3': g})\n",
    })
    assert keys[ApiKind.MODEL_TYPE] == {"gemma", "qwen3"}


def test_inheritance_and_dataclass_fields_within_the_package():
    keys, _ = release("trl", {
        "trl/__init__.py": "from .configs import *\n__all__ = ['Child', 'Plain']\n__all__ += ['Extra']\n",
        "trl/configs.py": (
            "from dataclasses import dataclass\nimport trl.base as base_mod\nfrom .base import Base\n"
            "@dataclass\nclass Child(Base):\n    beta: float = 0.1\n"
            "class Plain(Base):\n    pass\n"
            "class Static:\n    @staticmethod\n    def make(x, *args):\n        pass\n"
        ),
        "trl/base.py": "from dataclasses import dataclass\n@dataclass\nclass Base:\n    alpha: int = 1\n",
    })
    params = keys[ApiKind.PARAM]
    assert {"trl:Child(alpha)", "trl:Child(beta)", "trl:Plain(alpha)", "trl:Static.make(x)", "trl:Static.make(*)"} <= params
    assert "trl:Child(**)" not in params
    assert "trl:Extra" in keys[ApiKind.NAME]


def test_a_file_that_does_not_parse_still_counts_as_a_module():
    info = extract_module(b"def broken(:\n", "trl.bad", False)
    assert info.error and info.error.startswith("SyntaxError")
    assert module_name("trl/sub/__init__.py") == ("trl.sub", True)
    assert module_name("trl/data.json") is None
    assert module_name("trl/not-a-module.py") is None


# ---------------------------------------------------------------- the range zip reader


def _zip(members: dict[str, bytes], zip64: bool = False) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            with zf.open(zipfile.ZipInfo(name), "w", force_zip64=zip64) as handle:
                handle.write(data)
    return buf.getvalue()


def _fetcher(blob: bytes, ranges: bool = True):
    calls = []

    def fetch(start, length):
        calls.append((start, length))
        if not ranges:
            return 0, len(blob), blob
        if start is None:
            start = max(0, len(blob) - length)
        return start, len(blob), blob[start : start + length]

    return fetch, calls


def test_reads_only_wanted_members_and_coalesces_neighbours():
    rng = random.Random(1)
    members = {"a.py": b"x = 1\n", "b.py": b"y = 2\n", "big.bin": rng.randbytes(2_000_000), "c.py": b"z = 3\n"}
    blob = _zip(members)
    fetch, calls = _fetcher(blob)
    remote = RemoteZip(fetch, "t.whl")
    want = [m for m in remote.members if m.name.endswith(".py")]
    assert remote.read(want) == {"a.py": b"x = 1\n", "b.py": b"y = 2\n", "c.py": b"z = 3\n"}
    # the tail read holds c.py; a.py and b.py are neighbours: one more request
    assert len(calls) == 2 and sum(length for _, length in calls) < 600_000


def test_server_without_ranges_and_a_lying_member():
    blob = _zip({"a.py": b"a = 1\n" * 1000})
    fetch, _ = _fetcher(blob, ranges=False)
    remote = RemoteZip(fetch, "t.whl")
    (member,) = remote.members
    assert remote.read([member]) == {"a.py": b"a = 1\n" * 1000}
    # a central directory that understates a member's size: inflating stops at the bound, the member is left out
    liar = Member(name=member.name, offset=member.offset, compressed=member.compressed, size=10, crc=member.crc, method=8)
    assert remote.read([liar]) == {}
    assert remote.read([member], max_member=10) == {}


def test_zip64_and_broken_files():
    blob = _zip({"a.py": b"a = 1\n"}, zip64=True)
    fetch, _ = _fetcher(blob)
    assert RemoteZip(fetch, "t.whl").read(RemoteZip(fetch, "t.whl").members) == {"a.py": b"a = 1\n"}
    fetch, _ = _fetcher(b"not a zip" * 100)
    with pytest.raises(PackageIndexError, match="not a zip file"):
        RemoteZip(fetch, "t.whl")
    good = _zip({"a.py": b"a"})
    fetch, _ = _fetcher(good.replace(b"PK\x01\x02", b"PK\x09\x09"))
    with pytest.raises(PackageIndexError, match="corrupt central directory"):
        RemoteZip(fetch, "t.whl")
    assert zlib.crc32(b"") == 0
