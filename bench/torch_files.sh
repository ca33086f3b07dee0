#!/usr/bin/env bash
# What torch's files say of its build, beside what importing it says: the recordings a probe that reads torch's files
# before importing it is tested on (tests/data/smoke/device/*/torch).
#
#   bench/torch_files.sh OUT      (python3 on PATH: the interpreter whose torch is read)
#
# OUT gets version.py, lib-ls.txt (torch/lib), so-strings.txt (architecture, cuDNN and NCCL strings in torch's
# libraries: library, offset, text), nvidia-dists.txt, nvidia-libs.txt and import.json (what importing torch reports).
set -u
O=${1:?usage: bench/torch_files.sh OUT}; mkdir -p "$O"
T=$(python3 -c 'import importlib.util,os;print(os.path.dirname(importlib.util.find_spec("torch").origin))')
echo "$T" >$O/torch_dir.txt
cp "$T/version.py" $O/version.py
cp "$T/share/cmake/Torch/TorchConfig.cmake" $O/TorchConfig.cmake 2>/dev/null
ls -la "$T/lib" >$O/lib-ls.txt
python3 - "$T" >$O/so-strings.txt <<'PY'
import re, sys, pathlib, mmap
arch = re.compile(rb'(?:sm|compute)_\d+[a-z]?(?:[ ;,=]+(?:-gencode[ =])?(?:arch=)?(?:sm|compute)_\d+[a-z]?){2,}')
other = re.compile(rb'(?:NCCL version [0-9.]+[^\x00]{0,40}|cudnn[^\x00]{0,10}[0-9]+\.[0-9]+\.[0-9]+|CUDA_ARCH_FLAGS[^\x00]{0,200})')
for so in sorted(pathlib.Path(sys.argv[1], "lib").glob("*.so*")):
    with open(so, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        for rx, n in ((arch, 6), (other, 6)):
            for i, hit in enumerate(rx.finditer(m)):
                if i >= n: break
                print(so.name, hit.start(), hit.group()[:400].decode("latin-1"))
PY
python3 - >$O/import.json 2>$O/import.stderr <<'PY'
import json, torch
def get(f):
    try:
        return f()
    except Exception as e:
        return f"error: {type(e).__name__}: {e}"
r = {k: get(f) for k, f in {"version": lambda: torch.__version__, "cuda": lambda: torch.version.cuda,
     "hip": lambda: torch.version.hip, "debug": lambda: torch.version.debug, "git": lambda: torch.version.git_version,
     "cxx11": lambda: torch._C._GLIBCXX_USE_CXX11_ABI, "arch_flags": lambda: torch._C._cuda_getArchFlags(),
     "arch_list": lambda: torch.cuda.get_arch_list(), "cudnn": lambda: torch.backends.cudnn.version(),
     "nccl": lambda: list(torch.cuda.nccl.version()), "capability": lambda: torch.cuda.get_device_capability(0),
     "name": lambda: torch.cuda.get_device_name(0)}.items()}
print(json.dumps(r, indent=1, default=str))
PY
python3 -m pip list 2>/dev/null | grep -i nvidia >$O/nvidia-dists.txt
for d in $(python3 -c 'import site;print(" ".join(site.getsitepackages()))'); do ls -d $d/nvidia/*/lib/* 2>/dev/null; done >$O/nvidia-libs.txt
