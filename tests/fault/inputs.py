"""Hypothesis strategies and builders for hostile inputs: facts, versions, text with escapes and secrets."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import strategies as st

from compat.model.facts import (
    Facts,
    Hardware,
)
from tests.support.facts import LINUX, NO_HARDWARE, facts, interpreter, launch_by


def facts_with(
    *, packages: dict[str, str] | None = None, torch: str | None = None, hardware: Hardware | None = None,
    env: dict[str, str] | None = None,
) -> Facts:
    """A saved snapshot of a Linux box (no GPU unless `hardware` says so) with the given parts."""
    return facts(
        python=interpreter(executable="/usr/bin/python3", markers=LINUX),
        packages=packages if packages is not None else {"trl": "0.15.2", "vllm": "0.7.2", "torch": "2.5.1"},
        torch=torch,
        hardware=hardware or NO_HARDWARE,
        launch=launch_by(env=env),
    )


def replace(facts: Facts, **changes: Any) -> Facts:
    return dataclasses.replace(facts, **changes)


# ------------------------------------------------------------------ strategies

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=25,
)
"""Any JSON value, for the places a JSON object of a known shape is expected."""

numbers = st.one_of(
    st.integers(min_value=0, max_value=99).map(str),
    st.integers(min_value=0, max_value=10**30).map(str),
    st.just("9" * 5000),
)
versions = st.one_of(
    st.lists(numbers, min_size=1, max_size=4).map(".".join),
    st.text(alphabet="0123456789.+-abcrcdevpostlocal!_ \x00\x1b", max_size=30),
    st.sampled_from(["", "N/A", "[Not Supported]", "nan", "-1", "1e9", "١٢.٣"]),
)
"""Versions as a hostile host writes them: huge numbers, junk, empty, other scripts' digits."""

ESCAPES = st.sampled_from([
    "\x1b]0;pwned\x07",  # set the window title
    "\x1b]52;c;ZXZpbA==\x07",  # write the clipboard
    "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",  # hyperlink
    "\x1bP+q\x1b\\",  # DCS request
    "\x1b[2J\x1b[H",  # clear the screen
    "\x1b[6n",  # ask the terminal to answer
    "\x9b31m", "\x9d0;x\x9c",  # 8-bit CSI and OSC
    "\r", "\x08", "\x07", "\x1b",
])
hostile_text = st.lists(st.one_of(st.text(max_size=10), ESCAPES), max_size=6).map("".join)
"""Text with terminal control sequences mixed in."""

SECRET_VALUES = st.one_of(
    st.from_regex(r"hf_[A-Za-z0-9]{34}", fullmatch=True),
    st.from_regex(r"ghp_[A-Za-z0-9]{36}", fullmatch=True),
    st.from_regex(r"https?://[a-z]{3,8}:[A-Za-z0-9!$%]{6,16}@[a-z]{3,10}\.example/simple", fullmatch=True),
    st.from_regex(r"AKIA[0-9A-Z]{16}", fullmatch=True),
)
"""Values that are secrets whatever the name of the variable holding them."""
SECRET_NAMES = st.sampled_from([
    "VLLM_API_PASS", "NCCL_PW", "ACCELERATE_HUB_PAT", "HF_TOKEN", "WANDB_API_KEY", "TORCH_SECRET", "VLLM_API_KEY",
    "NCCL_IB_AUTH_TOKEN", "ACCELERATE_PASSWORD", "VLLM_PWD", "TORCH_HUB_CREDENTIALS", "NCCL_COOKIE",
])
"""Names that hold secrets, whatever their value."""
