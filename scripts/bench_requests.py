#!/usr/bin/env python3
"""Counts the FUSE requests in an `strace -f -xx -e trace=read` log of a FUSE daemon and names them:
"3 (LOOKUP 2, READ 1)". A request is a read() whose data starts with a FUSE header whose length
field equals the count read() returned (threads' reads of anything else do not match), whether
strace printed the call whole or as an unfinished/resumed pair."""
import collections
import re
import sys

OPCODES = {1: "LOOKUP", 2: "FORGET", 3: "GETATTR", 4: "SETATTR", 5: "READLINK", 10: "UNLINK",
           12: "RENAME", 14: "OPEN", 15: "READ", 16: "WRITE", 18: "RELEASE", 20: "FSYNC",
           22: "GETXATTR", 25: "FLUSH", 27: "OPENDIR", 28: "READDIR", 29: "RELEASEDIR", 34: "ACCESS",
           35: "CREATE", 39: "IOCTL", 42: "BATCH_FORGET", 44: "READDIRPLUS", 45: "RENAME2"}
call = re.compile(r'"((?:\\x[0-9a-f]{2})+)"(?:\.\.\.)?, \d+\) = (\d+)')

counts = collections.Counter()
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    match = call.search(line)
    if not match:
        continue
    data = bytes(int(byte, 16) for byte in match.group(1).split("\\x")[1:])
    if len(data) < 8 or int.from_bytes(data[0:4], "little") != int(match.group(2)):
        continue
    opcode = int.from_bytes(data[4:8], "little")
    counts[OPCODES.get(opcode, "opcode %d" % opcode)] += 1
names = ", ".join("%s %d" % (name, count) for name, count in counts.most_common())
print("%d (%s)" % (sum(counts.values()), names) if counts else "0")
