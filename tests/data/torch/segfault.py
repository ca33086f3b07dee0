# torch/__init__.py of a fake torch that crashes the interpreter on import.
import os
import signal

os.kill(os.getpid(), signal.SIGSEGV)
