#!/usr/bin/env python3
"""What an Obsidian-style indexer does on start: read every Markdown file under a folder and
pull out its frontmatter and its headings."""
import os
import sys

entries = 0
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        if not name.endswith(".md"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            text = handle.read()
        if text.startswith("---\n"):
            end = text.find("\n---\n", 4)
            frontmatter = text[4:end] if end > 0 else ""
            entries += frontmatter.count("\n") + 1
        entries += sum(1 for line in text.splitlines() if line.startswith("#"))
print(entries)
