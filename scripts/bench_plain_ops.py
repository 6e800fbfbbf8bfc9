#!/usr/bin/env python3
"""Times the plain-file operations a vault's tools make (git writing objects, an editor's
attachment save): COUNT rounds of create + write 1 KB + close + rename + unlink, in a
scratch folder `.bench-plain` under DIR. Prints the mean milliseconds of one round.
  bench_plain_ops.py DIR COUNT"""
import os
import sys
import time

root, count = sys.argv[1], int(sys.argv[2])
folder = os.path.join(root, ".bench-plain")
os.makedirs(folder, exist_ok=True)
payload = os.urandom(1024)
start = time.monotonic()
for i in range(count):
    temp = os.path.join(folder, "tmp_obj_%d" % i)
    final = os.path.join(folder, "obj_%d" % i)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    os.write(fd, payload)
    os.close(fd)
    os.rename(temp, final)
    os.unlink(final)
elapsed = time.monotonic() - start
os.rmdir(folder)
print("%.4f" % (elapsed * 1000 / count))
