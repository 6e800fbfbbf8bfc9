#!/usr/bin/env python3
"""Saves files the way sed -i and atomic-write libraries do: read the file, change one frontmatter
value, write a temp file in the same folder, fsync it, rename it over the original. The value is
`current_page`, one more than it was (1 where there was none), so every save changes the file:
a save of unchanged bytes is one Shelf need not commit, and repeated runs would measure that.
  bench_saves.py FOLDER COUNT   the first COUNT *.md files of FOLDER by name
  bench_saves.py FILE           that file alone (no listing: counting one save's requests)"""
import os
import re
import sys

if len(sys.argv) > 2:
    folder, count = sys.argv[1], int(sys.argv[2])
    names = sorted(name for name in os.listdir(folder) if name.endswith(".md"))[:count]
else:
    folder, name = os.path.split(sys.argv[1])
    names = [name]
for name in names:
    path = os.path.join(folder, name)
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    page = re.search(r"(?m)^current_page: (\d+)$", text)
    if page:
        text = text[:page.start(1)] + str(int(page.group(1)) + 1) + text[page.end(1):]
    else:
        text = re.sub(r"(?m)^(title: .*)$", lambda m: m.group(1) + "\ncurrent_page: 1", text, count=1)
    temp = os.path.join(folder, ".%s.tmp%d" % (name, os.getpid()))
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)
