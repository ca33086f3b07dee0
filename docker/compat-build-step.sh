#!/usr/bin/env bash
# The build steps that the Dockerfiles run, kept in one script so that the tests run the very
# same commands (tests/docker/) on a machine without a Docker engine.
#
#   compat-build-step install [SRC [DIST]]
#                                     build the compat wheel from the source tree SRC (default .)
#                                     into DIST and install it with the current python
#                                     (extra pip options: COMPAT_PIP_ARGS)
#   compat-build-step lock OUT        write the pinned set for TARGETS on the declared hardware to OUT
#   compat-build-step gate [FILE]     fail the build on findings at or above FAIL_ON: in the pinned set
#                                     FILE (judged without installing it) and, when TRAIN_PYTHON is
#                                     set, in the environment of that interpreter as installed
#
# Settings (environment variables; in a Dockerfile, build arguments):
#   GPUS            the GPUs the image will run on: 8xH100, 1xRTX5090, ... (lock, gate; required)
#   DRIVER          the NVIDIA driver of those machines: 580.65.06 (lock, gate; required)
#   TARGETS         what to lock, space separated: "trl[vllm] flash-attn" (lock; default "trl[vllm]")
#   PYTHON_VERSION  the Python the image trains with: 3.12 (lock; checked against TRAIN_PYTHON by gate)
#   TRAIN_PYTHON    the interpreter whose installed packages gate judges (gate; optional)
#   FAIL_ON         error | warning | info (gate; default error)
#   COMPAT          the compat command (default: compat on PATH)
#
# Exit codes follow compat: 0 good, 1 findings or no compatible set, 2 bad settings or data.
set -euo pipefail

me=compat-build-step
compat=${COMPAT:-compat}

die() {
    echo "$me: error: $*" >&2
    exit 2
}

# A build has no GPU to look at: the hardware is declared, never detected, and saying nothing
# would silently lock or judge for the wrong machine.
need_hardware() {
    [[ -n ${GPUS:-} ]] || die "set GPUS to the GPUs the image will run on (e.g. --build-arg GPUS=8xH100)"
    [[ -n ${DRIVER:-} ]] || die "set DRIVER to the NVIDIA driver of those machines (e.g. --build-arg DRIVER=580.65.06)"
}

step_install() {
    local src=${1:-.} dist=${2:-${TMPDIR:-/tmp}/compat-dist}
    [[ -f $src/pyproject.toml ]] || die "$src: no pyproject.toml, not a compat source tree"
    local -a pip_args
    # Word splitting is wanted here: COMPAT_PIP_ARGS holds several options.
    read -r -a pip_args <<<"${COMPAT_PIP_ARGS:-}"
    mkdir -p "$dist"
    rm -f "$dist"/compat-*.whl
    # Installed from the wheel, not the tree: the wheel is what carries the matrix, and it stays
    # in DIST for images that install compat next to their own Python.
    python -m pip wheel --no-cache-dir --disable-pip-version-check --no-deps "${pip_args[@]}" --wheel-dir "$dist" "$src"
    local -a wheels=("$dist"/compat-*.whl)
    [[ -f ${wheels[0]} ]] || die "$dist: building $src made no compat wheel"
    # --force-reinstall: an interpreter that already sees a compat (system site packages, a base
    # image that had one) would otherwise keep that one and skip the wheel just built.
    python -m pip install --no-cache-dir --disable-pip-version-check --force-reinstall "${pip_args[@]}" "${wheels[0]}"
    # The installed command must start before the image is worth keeping.
    "$compat" --version
}

step_lock() {
    local out=${1:-}
    [[ -n $out ]] || die "lock needs the file to write: $me lock requirements.txt"
    need_hardware
    local -a targets
    # read -a splits on blanks without expanding globs: trl[vllm] stays trl[vllm].
    read -r -a targets <<<"${TARGETS:-trl[vllm]}"
    [[ ${#targets[@]} -gt 0 ]] || die "TARGETS is empty; name what to lock, e.g. TARGETS='trl[vllm]'"
    local -a args=(lock "${targets[@]}" --gpus "$GPUS" --driver "$DRIVER" --format requirements)
    [[ -z ${PYTHON_VERSION:-} ]] || args+=(--python-version "$PYTHON_VERSION")
    local tmp="$out.partial"
    # Written aside and moved into place, so that a failed lock never leaves half a file behind.
    if "$compat" "${args[@]}" >"$tmp"; then
        mv -f "$tmp" "$out"
        echo "$me: locked ${targets[*]} for $GPUS, driver $DRIVER${PYTHON_VERSION:+, Python $PYTHON_VERSION} -> $out" >&2
    else
        local rc=$?
        rm -f "$tmp"
        if [[ $rc -eq 1 ]]; then
            echo "$me: lock failed: no compatible set for ${targets[*]} on $GPUS, driver $DRIVER (causes above)" >&2
        else
            echo "$me: lock could not run (exit $rc, see above)" >&2
        fi
        exit "$rc"
    fi
}

# Runs one doctor and turns its exit code into a line that says which check stopped the build.
doctor() {
    local what=$1
    shift
    local rc=0
    "$compat" doctor --gpus "$GPUS" --driver "$DRIVER" --fail-on "${FAIL_ON:-error}" "$@" || rc=$?
    case $rc in
        0) echo "$me: gate passed: $what on $GPUS, driver $DRIVER" >&2 ;;
        1) echo "$me: gate failed: $what has findings at or above ${FAIL_ON:-error} on $GPUS, driver $DRIVER (see above)" >&2 ;;
        *) echo "$me: gate could not judge $what (exit $rc, see above)" >&2 ;;
    esac
    return "$rc"
}

step_gate() {
    local file=${1:-}
    need_hardware
    [[ -n $file || -n ${TRAIN_PYTHON:-} ]] || die "gate needs a requirements file or TRAIN_PYTHON: $me gate requirements.txt"
    if [[ -n $file ]]; then
        [[ -f $file ]] || die "$file: no such requirements file"
        doctor "the pinned set in $file" -r "$file"
    fi
    if [[ -n ${TRAIN_PYTHON:-} ]]; then
        command -v "$TRAIN_PYTHON" >/dev/null || die "TRAIN_PYTHON=$TRAIN_PYTHON: no such interpreter"
        if [[ -n ${PYTHON_VERSION:-} ]]; then
            # The lock was made for PYTHON_VERSION; an image on another Python installs other wheels.
            local have
            have=$("$TRAIN_PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
            [[ $have == "$PYTHON_VERSION" ]] \
                || die "TRAIN_PYTHON is Python $have but the set was locked for PYTHON_VERSION=$PYTHON_VERSION"
        fi
        doctor "the environment of $TRAIN_PYTHON" --python "$TRAIN_PYTHON"
    fi
}

usage() {
    # The comment block at the top is the help text; asked for, it goes to stdout.
    local fd=2
    [[ $1 -ne 0 ]] || fd=1
    sed -n '/^# *compat-build-step install/,/^# Exit codes/s/^# \{0,1\}//p' "$0" >&"$fd"
    exit "$1"
}

[[ $# -ge 1 ]] || usage 2
step=$1
shift
case $step in
    install) step_install "$@" ;;
    lock) step_lock "$@" ;;
    gate) step_gate "$@" ;;
    -h | --help | help) usage 0 ;;
    *) die "unknown step '$step' (install, lock or gate)" ;;
esac
