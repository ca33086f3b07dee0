"""Script facts: what a training script does, read with `ast` (the script is never run).

The fetch reads the file (any OS error or undecodable byte becomes `parse_error`); the parse
walks the syntax tree for the patterns the failure catalog asks about. Only literal values
count: `device_map=args.device_map` is recorded as "<dynamic>", never guessed.
"""

from __future__ import annotations

import ast
from pathlib import Path

from compat.errors import UsageError
from compat.model.facts import Script
from compat.regular_file import NotRegularFile, open_regular

DYNAMIC = "<dynamic>"
"""Recorded for a keyword whose value is not a literal (a variable, a call, an f-string)."""

_MAX_BYTES = 5 * 1024 * 1024  # a "script" larger than this is not a training script


def read_script(path: Path) -> Script:
    """Script facts for `path`; a file that cannot be read or parsed gives `parse_error`.

    Raises UsageError when the named script does not exist or is a special file (a FIFO would
    block), as a missing `--accelerate-config` does: the caller named it.
    """
    try:
        with open_regular(path) as fh:
            raw = fh.read(_MAX_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"script {path} does not exist") from None
    except NotRegularFile as exc:
        raise UsageError(f"script {path} is {exc.strerror}") from None
    except OSError as exc:
        return _failed(path, f"cannot read: {exc.strerror or exc}")
    if len(raw) > _MAX_BYTES:
        return _failed(path, f"larger than {_MAX_BYTES // (1024 * 1024)} MiB: not a training script")
    return parse_script(raw, path=str(path))


def parse_script(source: bytes | str, *, path: str) -> Script:
    """Script facts from the script's text (pure)."""
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return _failed(path, f"not valid Python: {exc.msg}{where}")
    except (ValueError, UnicodeDecodeError) as exc:  # NUL bytes, undecodable text
        return _failed(path, f"not valid Python: {exc}")
    except (RecursionError, MemoryError):  # CPython's parser reports a deep expression as either
        return _failed(path, "not valid Python: nested too deeply to parse")
    visitor = _Visitor()
    try:
        visitor.visit(tree)
    except RecursionError:
        return _failed(path, "nested too deeply to read")
    return Script(
        path=path,
        trainers=tuple(sorted(visitor.trainers)),
        device_maps=tuple(sorted(visitor.device_maps)),
        use_vllm=visitor.flags.get("use_vllm"),
        vllm_mode=visitor.vllm_mode,
        config_access=visitor.config_access,
        gradient_checkpointing=visitor.flags.get("gradient_checkpointing"),
        use_cache=visitor.flags.get("use_cache"),
        use_liger_kernel=visitor.liger,
    )


def _failed(path: Path | str, why: str) -> Script:
    return Script(
        path=str(path), trainers=(), device_maps=(), use_vllm=None, vllm_mode=None,
        config_access=False, gradient_checkpointing=None, use_cache=None, parse_error=why,
    )


_LIGER_PATCHES = "liger_kernel.transformers"
"""Liger's patches of transformers models: loading this package is what breaks on a transformers it does not match."""


class _Visitor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.trainers: set[str] = set()
        self.device_maps: set[str] = set()
        self.flags: dict[str, bool] = {}
        self.vllm_mode: str | None = None
        self.config_access = False
        self.liger: bool | None = None  # True once anything turns Liger's patches on; a literal False only else
        self._wrapped_names: list[set[str]] = [set()]  # names that may hold a wrapped model, per scope

    # --- classes and names -------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        # liger_kernel.transformers imports its model patches (and the transformers names they need) at load
        if any(alias.name.startswith(_LIGER_PATCHES) for alias in node.names):
            self.liger = True
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if module.startswith(_LIGER_PATCHES) or (module == "liger_kernel" and any(a.name == "transformers" for a in node.names)):
            self.liger = True
        if node.module and node.module.split(".")[0] in ("trl", "transformers"):
            for alias in node.names:
                if alias.name.endswith("Trainer"):
                    self.trainers.add(alias.name)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        trainer_subclass = False
        for base in node.bases:
            name = _dotted_tail(base)
            if name and name.endswith("Trainer"):
                self.trainers.add(name)
                trainer_subclass = True
        if trainer_subclass:
            # Inside a Trainer subclass the `model` argument of a method is what the Trainer
            # hands over: possibly DataParallel/DDP-wrapped.
            self._wrapped_names.append({"model"})
            self.generic_visit(node)
            self._wrapped_names.pop()
        else:
            self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _dotted_tail(node.func)
        if name and ((name.endswith("Trainer") and name[0].isupper()) or name in _TRL_CONFIGS):
            self.trainers.add(name)
        if name and name.lstrip("_").startswith("apply_liger_kernel"):
            self.liger = True
        for kw in node.keywords:
            if kw.arg is None:
                continue
            if kw.arg == "device_map":
                self.device_maps.add(_literal_text(kw.value))
            elif kw.arg in ("use_vllm", "gradient_checkpointing", "use_cache"):
                value = _literal(kw.value)
                if isinstance(value, bool):
                    self.flags[kw.arg] = value
            elif kw.arg == "use_liger_kernel":
                value = _literal(kw.value)
                if value is True or (value is False and self.liger is None):
                    self.liger = value
            elif kw.arg == "vllm_mode":
                value = _literal(kw.value)
                self.vllm_mode = value if isinstance(value, str) else DYNAMIC
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        # `model = accelerator.prepare(model)` / `model = trainer.model`: a wrapped model.
        value = node.value
        wrapped = (
            isinstance(value, ast.Call) and _dotted_tail(value.func) in ("prepare", "prepare_model")
        ) or (isinstance(value, ast.Attribute) and value.attr == "model")
        if wrapped:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self._wrapped_names[-1].add(target.id)
                elif isinstance(target, ast.Tuple):
                    self._wrapped_names[-1].update(e.id for e in target.elts if isinstance(e, ast.Name))
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "config":
            base = node.value
            if isinstance(base, ast.Attribute) and base.attr == "model":
                self.config_access = True  # trainer.model.config / self.model.config
            elif isinstance(base, ast.Name) and any(base.id in s for s in self._wrapped_names):
                self.config_access = True
        self.generic_visit(node)


_TRL_CONFIGS = frozenset({
    "SFTConfig", "DPOConfig", "GRPOConfig", "PPOConfig", "OnlineDPOConfig", "KTOConfig", "ORPOConfig",
    "CPOConfig", "RLOOConfig", "RewardConfig", "GKDConfig", "XPOConfig", "NashMDConfig", "BCOConfig",
    "PRMConfig", "GOLDConfig",
})


def _dotted_tail(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _literal(node: ast.AST) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return DYNAMIC


def _literal_text(node: ast.AST) -> str:
    value = _literal(node)
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "<dict>"  # {"": local_rank}: an explicit per-process placement
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return DYNAMIC
