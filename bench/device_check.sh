#!/usr/bin/env bash
# compat's GPU checks in one command, for the day a GPU machine is lent (issue 24; docs/smoke.md, docs/testing.md):
#
#   bench/device_check.sh OUT [PYTHON]
#
# OUT     a folder for the outputs (made if missing): doctor.json, facts.json, smoke.json, each with its .stderr and
#         .rc (the exit code), nvidia-smi.txt and versions.txt
# PYTHON  the interpreter whose stack is judged and smoked (default: python3 on PATH); it must already hold the
#         stack (torch with CUDA, trl, vllm, ...): nothing is installed into it
#
# compat runs from this checkout in a throwaway venv under a temp dir (removed at the end); nothing is installed
# globally. A machine without network needs WHEELHOUSE: a folder of compat's wheel and its dependencies' for
# PYTHON's version (`pip wheel --wheel-dir bench/.wheelhouse .` run by that Python version, with network).
# Settings: COMPAT (a compat command to use instead, e.g. an installed `compat`), BUDGET (smoke's, default 480 s),
# TRAINERS (smoke's --trainer, default sft,grpo). Exit code: 0 the outputs were written (read them for the verdicts),
# 2 usage, or compat could not be installed.
set -uo pipefail

out=${1:?usage: bench/device_check.sh OUT [PYTHON]}
python=${2:-$(command -v python3)}
budget=${BUDGET:-480}
trainers=${TRAINERS:-sft,grpo}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out" || exit 2

if [ -z "${COMPAT:-}" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    from=("$here")  # offline: the compat wheel in WHEELHOUSE (building from source would need hatchling)
    [ -n "${WHEELHOUSE:-}" ] && from=(--no-index --find-links "$WHEELHOUSE" compat)
    if ! { "$python" -m venv "$tmp/venv" && "$tmp/venv/bin/python" -m pip install -q "${from[@]}"; } \
        >"$out/install.log" 2>&1; then
        echo "device_check: cannot install compat into a throwaway venv: see $out/install.log" >&2
        exit 2
    fi
    COMPAT="$tmp/venv/bin/compat"
fi

run() {  # run NAME ARGS...: compat ARGS, its output in OUT/NAME (-o), its stderr and exit code beside it
    local name=$1
    shift
    echo "+ compat $* -o $out/$name" >&2
    $COMPAT "$@" -o "$out/$name" 2>"$out/$name.stderr"
    echo $? >"$out/$name.rc"
}

run doctor.json doctor --python "$python" --json
run facts.json facts --python "$python"
run smoke.json smoke --python "$python" --json --budget "$budget" --trainer "$trainers"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
"$python" -c 'import sys, torch; print(sys.version); print("torch", torch.__version__, torch.version.cuda)' \
    >"$out/versions.txt" 2>&1
echo "device_check: outputs in $out (exit codes: $(cat "$out"/*.rc | tr '\n' ' '))" >&2
exit 0
