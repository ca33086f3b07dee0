# torch/__init__.py of a fake torch whose CUDA library does not match (what a mixed install prints).
raise ImportError(
    "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: "
    "undefined symbol: ncclCommRegister"
)
