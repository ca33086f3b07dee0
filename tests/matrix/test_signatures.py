"""The shipped catalog: complete, valid, every pattern safe and prefilterable, every signature
recognised first on a real log line from its upstream thread."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from compat.errors import MatrixError
from compat.explain.match import explain
from compat.explain.scan import Scanner
from compat.matrix import shipped_matrix_dir
from compat.matrix.signatures import Recognition, load_signature_dir, load_signatures
from tests.support.signature_entries import GOOD, entry_tables

LOGS = Path(__file__).resolve().parent.parent / "data" / "logs"
SIGS = load_signature_dir(shipped_matrix_dir() / "signatures", label="matrix/signatures")
BY_ID = {s.id: s for s in SIGS}


def test_catalog_size_and_areas():
    roots = [s for s in SIGS if not s.wrapper]
    assert len(roots) >= 60
    areas = {s.area for s in SIGS}
    assert {"cuda", "binary", "nccl", "vllm", "trl_vllm", "trl", "transformers", "deepspeed", "dtensor"} <= areas


def test_seed_failures_have_the_researched_conditions():
    f1 = BY_ID["device-map-auto-silent-tensor-parallel"]
    assert dict(f1.when.packages)["transformers"] == __import__("packaging.specifiers").specifiers.SpecifierSet(">=4.50.0,<4.54.0")
    assert any("found no DeviceMesh" in p for p in f1.patterns) and any("aten" in p for p in f1.patterns)
    assert f1.when.script.device_map == frozenset({"auto"})
    f3a = BY_ID["grpo-vllm-device-mismatch"]
    assert str(dict(f3a.when.packages)["vllm"]) == "<0.7.1" and f3a.fix.requires == ("vllm==0.7.2",)
    f3b = BY_ID["synced-gpus-nocache-rope"]
    assert not any(r.startswith("vllm") for r in f3b.fix.requires)
    assert "does NOT fix" in f3b.fix.advice and f3b.when.zero_stage == frozenset({3})
    f4 = BY_ID["grpo-fsdp-ref-model-on-cpu"]
    assert str(dict(f4.when.packages)["trl"]) == "<0.18.0,>=0.14.0" and "0.29.0" in f4.fix.advice
    f5 = BY_ID["online-dpo-dataparallel-config"]
    assert f5.fix.requires == ("trl>=0.17.0",) and f5.when.launcher == frozenset({"python"})


@pytest.mark.parametrize("sig", [s for s in SIGS if s.patterns], ids=lambda s: s.id)
def test_every_signature_is_ranked_first_on_its_real_log(sig):
    log = LOGS / f"{sig.id}.log"
    assert log.is_file(), f"missing test log {log.name}"
    data = log.read_bytes()
    for blocks in ([data], [data.decode("utf-8")], data.decode("utf-8").splitlines(keepends=True)):
        result = explain(blocks, SimpleNamespace(signatures=SIGS))
        assert result.matches and result.matches[0].signature.id == sig.id, [m.signature.id for m in result.matches]
        assert result.known is not (sig.wrapper or sig.notice)  # a harmless line alone is no failure


def test_an_entry_without_patterns_is_reported_by_doctor():
    """explain cannot match it, so doctor must: through its `when`, or through the built-in check that owns it."""
    from compat.judge.checks import OWNED_IDS

    silent = [s.id for s in SIGS if not s.patterns and s.id not in OWNED_IDS and not s.doctor]
    assert silent == []


def test_no_orphan_logs():
    assert {p.stem for p in LOGS.glob("*.log")} <= set(BY_ID)


def test_every_pattern_has_a_prefilter_literal():
    scanner = Scanner([p for s in SIGS for p in s.patterns])
    assert scanner.unfiltered == ()


def test_every_pattern_compiles_on_the_automaton_engine():
    hyperscan = pytest.importorskip("hyperscan")
    for s in SIGS:
        for p in (*s.patterns, *s.context, *s.frame_patterns):
            hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK).compile(expressions=[p.encode()], ids=[0], flags=[hyperscan.HS_FLAG_MULTILINE])


def test_every_pattern_is_rewritten_for_coloured_logs_and_the_set_compiles():
    pytest.importorskip("hyperscan")
    from compat.explain import match
    from compat.explain.colour import tolerant
    from compat.explain.scan import Engine

    rewritten = [tolerant(p) for s in SIGS for p in (*s.patterns, *s.context, *s.frame_patterns)]
    assert None not in rewritten  # else every coloured block would be stripped first: slow
    # The rewritten set compiles as explain builds it (its keys, flags and events): a densely coloured block is read
    # in place, which needs that automaton. explain's own scanner, so a process compiles it once for this test and
    # every coloured log it explains (about 4 s of CPU), not twice.
    scanner = match._scanner(match._keys(SIGS), Engine.HYPERSCAN, None)
    coloured = b"\x1b[31mtorch.OutOfMemoryError\x1b[0m: CUDA out of memory\n" * 50
    assert scanner.prepare(coloured) is coloured




def test_a_good_entry_loads():
    (sig,) = load_signatures(entry_tables(GOOD))
    assert sig.id == "x-fails" and sig.fix.requires == ("trl>=0.1",)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"patterns": ["(unclosed"]}, "signature[0].patterns[0]: does not compile"),
        ({"patterns": ["a*"]}, "matches an empty line"),
        ({"when": None}, "signature[0].when: missing"),
        ({"refs": []}, "at least one upstream reference"),
        ({"refs": ["see the forum"]}, "signature[0].refs[0]"),
        ({"fix": {}}, "needs requires or advice"),
        ({"severity": "fatal"}, "signature[0].severity"),
        ({"cause": None}, "signature[0].cause: missing"),
        ({"when": {}}, "doctor = false"),
        ({"colour": "red"}, "signature[0].colour: unknown key"),
    ],
)
def test_bad_entries_are_rejected_with_file_and_key(change, message):
    entry = {**GOOD, **change}
    entry = {k: v for k, v in entry.items() if v is not None}
    with pytest.raises(MatrixError) as err:
        load_signatures(entry_tables(entry))
    assert str(err.value).startswith("matrix/signatures/x.toml: ") and message in str(err.value)


def test_duplicate_ids_are_rejected():
    with pytest.raises(MatrixError, match="already defined"):
        load_signatures(entry_tables(GOOD) + entry_tables(GOOD))


@pytest.mark.parametrize(
    ("pattern", "what"),
    [(r"(a)x\1", "a back-reference"), (r"foo(?=bar)", "a lookaround"), (r"(?<!x)yy", "a lookaround"), (r"\Aboom", "\\A or \\Z")],
)
def test_what_the_automaton_cannot_run_is_rejected_with_file_and_key(pattern, what):
    with pytest.raises(MatrixError) as err:
        load_signatures(entry_tables({**GOOD, "patterns": [pattern]}))
    assert str(err.value).startswith("matrix/signatures/x.toml: signature[0].patterns[0]: uses ") and what in str(err.value)


def test_required_context_needs_context_patterns():
    with pytest.raises(MatrixError, match=r"signature\[0\]\.context_required: needs `context`"):
        load_signatures(entry_tables({**GOOD, "context_required": True}))
    (sig,) = load_signatures(entry_tables({**GOOD, "context_required": True, "context": ["ctx"]}))
    assert sig.context_required and sig.context == ("ctx",)


@pytest.mark.parametrize(("recognises", "message"), [
    (["abi-symbol"], r"signature\[0\]\.recognises\[0\]: 'abi-symbol' is not one of abi-undefined-symbol"),
    (["abi-undefined-symbol", "abi-undefined-symbol"], r"signature\[0\]\.recognises\[1\]: 'abi-undefined-symbol' is listed twice"),
    ("abi-undefined-symbol", r"signature\[0\]\.recognises: expected a list of strings, got str"),
])
def test_a_bad_recognition_tag_is_refused_with_file_and_key(recognises, message):
    with pytest.raises(MatrixError, match=r"^matrix/signatures/x\.toml: " + message):
        load_signatures(entry_tables({**GOOD, "recognises": recognises}))


def test_an_abi_tag_needs_the_package_it_is_about():
    with pytest.raises(MatrixError, match=r"signature\[0\]\.recognises\[0\]: an ABI failure is a compiled package's"):
        load_signatures(entry_tables({**GOOD, "when": {"gpu_count": ">=2"}, "recognises": ["abi-undefined-symbol"]}))
    (sig,) = load_signatures(entry_tables({**GOOD, "recognises": ["abi-undefined-symbol"]}))
    assert sig.recognises_for(Recognition.ABI_UNDEFINED_SYMBOL, "trl") and not sig.recognises_for(Recognition.ABI_UNDEFINED_SYMBOL, "vllm")


def test_the_checks_find_the_abi_entries_by_their_tag():
    """extension-without-wheel-for-torch and torch-pin-broken-extension point at these by tag, not by pattern text."""
    tagged = {s.id: dict(s.when.packages) for s in SIGS if Recognition.ABI_UNDEFINED_SYMBOL in s.recognises}
    assert set(tagged) == {"flash-attn-abi-undefined-symbol", "vllm-c-ext-torch-mismatch"}
    assert "flash-attn" in tagged["flash-attn-abi-undefined-symbol"] and "vllm" in tagged["vllm-c-ext-torch-mismatch"]


def test_an_entry_without_patterns_is_refused_not_a_crash():
    """`patterns` is required: the loader once passed `...` as its default and crashed on iterating it."""
    entry = {k: v for k, v in GOOD.items() if k != "patterns"}
    with pytest.raises(MatrixError, match=r"^matrix/signatures/x\.toml: signature\[0\]\.patterns: missing$"):
        load_signatures(entry_tables(entry))


def _named_packages(pattern: str) -> set[str]:
    """The alternation of package names after `No module named '` in a pattern."""
    return set(pattern.split("No module named '(?:", 1)[1].split(")", 1)[0].split("|"))


def test_the_submodule_entry_names_the_packages_the_not_installed_entry_names():
    # The two entries carry the stack's package names each in its own pattern (a catalog pattern cannot refer to a
    # list); a package added to one and not the other would be named when absent but not when a release lacks its
    # submodule, or the reverse. The not-installed entry also names flash_attn's compiled module, which has none.
    absent = _named_packages(BY_ID["stack-package-not-installed"].patterns[0])
    submodule = _named_packages(BY_ID["stack-submodule-missing-from-release"].patterns[0])
    assert absent - submodule == {"flash_attn_2_cuda"}
    assert submodule <= absent
