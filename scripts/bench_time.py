#!/usr/bin/env python3
"""Prints the wall time in seconds of running the given command once, its output discarded."""
import subprocess
import sys
import time

start = time.monotonic()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print("%.3f" % (time.monotonic() - start))
