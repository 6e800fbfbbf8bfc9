#!/usr/bin/env python3
"""Prints the wall time in seconds of one run of a command, its output discarded.
  bench_time.py CMD ARG...      the command as given
  bench_time.py -C DIR LINE     the command line LINE run in DIR, so a report can print LINE as it
                                ran; `python3` there is this interpreter, `scripts/…` this
                                repository's. A line without shell syntax skips the shell, whose
                                start-up would be a twentieth of a `find` of 10,000 names."""
import os
import shlex
import subprocess
import sys
import time

cwd = None
argv = sys.argv[1:]
if argv[0] == "-C":
    cwd, line = argv[1], argv[2]
    if any(char in line for char in "|&;<>()$`*?"):
        argv = ["sh", "-c", line]
    else:
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        argv = [sys.executable if word == "python3"
                else os.path.join(repo, word) if word.startswith("scripts/") else word
                for word in shlex.split(line)]
start = time.monotonic()
subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=cwd)
print("%.3f" % (time.monotonic() - start))
