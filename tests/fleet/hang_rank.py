"""torchrun's script for the hang test: the rank named by FLEET_TEST_HANG_RANK sleeps forever, the others run compat.fleet."""

import os
import runpy
import sys
import time

if os.environ.get("RANK") == os.environ.get("FLEET_TEST_HANG_RANK"):
    time.sleep(3600)
    sys.exit(0)
sys.argv[0] = "compat.fleet"
runpy.run_module("compat.fleet", run_name="__main__", alter_sys=True)
