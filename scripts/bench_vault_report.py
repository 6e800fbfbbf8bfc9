#!/usr/bin/env python3
"""Turns scripts/bench-vault's results.tsv into docs/bench-vault.md: medians per workload and
system, and Shelf's ratio to passthrough_ll -o cache=always (the target: within 1.5x).
  bench_vault_report.py RESULTS.tsv"""
import statistics
import sys
from collections import defaultdict

run = {}
skipped = {}
times = defaultdict(list)
for line in open(sys.argv[1]):
    fields = line.rstrip("\n").split("\t")
    if fields[0] == "run":
        run[fields[1]] = fields[2]
    elif fields[0] == "size" and fields[2] == "ptc_skipped":
        skipped[int(fields[1])] = fields[3]
    elif fields[0] == "time":
        n, system, workload, value = fields[1:5]
        times[(int(n), workload, system)].append(float(value))

names = {"native": "native (ext4)", "shelf": "Shelf", "ptc": "passthrough_ll -o cache=always",
         "bindfs": "bindfs, cached"}
peers = [("ptc", "passthrough_ll"), ("bindfs", "bindfs")]
workloads = [("plain_ms", "create + write 1 KB + rename + unlink, ms per round"),
             ("git_add", "`git init && git add -A`, s"), ("git_commit", "`git commit`, s"),
             ("git_dirty", "`git status --porcelain` lines after the commit")]


def cell(values, fmt):
    """The median, and the lowest and highest round in brackets."""
    median = fmt % statistics.median(values)
    return median if min(values) == max(values) else "%s [%s–%s]" % (median, fmt % min(values), fmt % max(values))


print("# Vault benchmark\n")
print("What git and attachments cost in a mounted library's plain-file area, beside a native copy of the")
print("same tree, libfuse's passthrough_ll (`-o cache=always`) and bindfs with the same caching")
print("(`--multithreaded -o kernel_cache,entry_timeout=86400,attr_timeout=86400`): the peer where")
print("passthrough_ll cannot run, as it keeps a descriptor per inode. Medians of %s rounds, the lowest and"
      % run.get("runs", "?"))
print("highest round in brackets, systems interleaved round by round.\n")
print("- command: `%s`" % run.get("command", "scripts/bench-vault"))
if run.get("config", "release") != "release":
    print("- **a %s build**: Shelf's times here are not its release speed" % run.get("config"))
print("- commit %s, %s, %s cores, kernel %s on %s, libfuse %s, %s, %s; %s rounds of plain operations per run"
      % (run.get("commit"), run.get("date"), run.get("cores"), run.get("kernel"), run.get("fs"),
         run.get("libfuse"), run.get("bindfs"), run.get("git"), run.get("ops")))
if not any(key[2] == "ptc" for key in times):
    print("- passthrough_ll could not be built here (libfuse3's examples missing)")
print()
for n in sorted({key[0] for key in times}):
    systems = [s for s in ["native", "shelf", "ptc", "bindfs"] if (n, "plain_ms", s) in times]
    shown_peers = [(s, label) for s, label in peers if s in systems]
    print("## %d books\n" % n)
    if n in skipped:
        print("passthrough_ll not run: it keeps a descriptor per inode (about 3 per book with .git), and the limit here is %s.\n" % skipped[n])
    print("| workload | " + " | ".join(names[s] for s in systems) + "".join(" | Shelf / %s" % label for _, label in shown_peers) + " |")
    print("|---|" + "---|" * (len(systems) + len(shown_peers)))
    for workload, label in workloads:
        fmt = "%d" if workload == "git_dirty" else "%.3f"
        row = [cell(times[(n, workload, s)], fmt) for s in systems]
        for peer, _ in shown_peers:
            shelf, other = statistics.median(times[(n, workload, "shelf")]), statistics.median(times[(n, workload, peer)])
            row.append("%.2fx" % (shelf / other) if other > 0 and workload != "git_dirty" else "")
        print("| %s | " % label + " | ".join(row) + " |")
    print()
