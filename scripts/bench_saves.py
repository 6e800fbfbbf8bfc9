#!/usr/bin/env python3
"""COUNT saves the way sed -i and atomic-write libraries do them: read the file, set one
frontmatter value, write a temp file in the same folder, fsync it, rename it over the original."""
import os
import re
import sys

folder, count = sys.argv[1], int(sys.argv[2])
names = sorted(name for name in os.listdir(folder) if name.endswith(".md"))[:count]
for index, name in enumerate(names):
    path = os.path.join(folder, name)
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    page = "current_page: %d" % (index + 1)
    text, replaced = re.subn(r"(?m)^current_page: .*$", page, text, count=1)
    if not replaced:
        text = re.sub(r"(?m)^(title: .*)$", lambda m: m.group(1) + "\n" + page, text, count=1)
    temp = os.path.join(folder, ".%s.tmp%d" % (name, os.getpid()))
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)
