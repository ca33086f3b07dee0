"""torchrun's script for the hang test: the rank named by FLEET_TEST_HANG_RANK sleeps (writing its pid to
FLEET_TEST_PIDFILE, so the test can end it: torchrun starts its workers in their own sessions), the others
run compat.fleet."""

import os
import runpy
import sys
import time
from pathlib import Path

if os.environ.get("RANK") == os.environ.get("FLEET_TEST_HANG_RANK"):
    Path(os.environ["FLEET_TEST_PIDFILE"]).write_text(str(os.getpid()))
    time.sleep(300)  # "forever" for the test, yet bounded should the test itself be killed
    sys.exit(0)
sys.argv[0] = "compat.fleet"
runpy.run_module("compat.fleet", run_name="__main__", alter_sys=True)
