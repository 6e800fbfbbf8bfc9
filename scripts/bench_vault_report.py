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

names = {"native": "native (ext4)", "shelf": "Shelf", "ptc": "passthrough_ll -o cache=always"}
workloads = [("plain_ms", "create + write 1 KB + rename + unlink, ms per round"),
             ("git_add", "`git init && git add -A`, s"), ("git_commit", "`git commit`, s"),
             ("git_dirty", "`git status --porcelain` lines after the commit")]
print("# Vault benchmark\n")
print("What git and attachments cost in a mounted library's plain-file area, beside a native copy of the")
print("same tree and libfuse's passthrough_ll. Medians of %s rounds, systems interleaved.\n" % run.get("runs", "?"))
print("- command: `%s`" % run.get("command", "scripts/bench-vault"))
if run.get("config", "release") != "release":
    print("- **a %s build**: Shelf's times here are not its release speed" % run.get("config"))
print("- commit %s, %s, %s cores, kernel %s on %s, libfuse %s, %s; %s rounds of plain operations per run"
      % (run.get("commit"), run.get("date"), run.get("cores"), run.get("kernel"), run.get("fs"),
         run.get("libfuse"), run.get("git"), run.get("ops")))
if not any(key[2] == "ptc" for key in times):
    print("- passthrough_ll could not be built here (libfuse3's examples missing), so Shelf is compared with native only")
print()
for n in sorted({key[0] for key in times}):
    systems = [s for s in ["native", "shelf", "ptc"] if (n, "plain_ms", s) in times]
    print("## %d books\n" % n)
    if n in skipped:
        print("passthrough_ll not run: it keeps a descriptor per inode (about 3 per book with .git), and the limit here is %s.\n" % skipped[n])
    print("| workload | " + " | ".join(names[s] for s in systems) + " | Shelf / passthrough |")
    print("|---|" + "---|" * (len(systems) + 1))
    for workload, label in workloads:
        medians = {s: statistics.median(times[(n, workload, s)]) for s in systems if (n, workload, s) in times}
        ratio = "%.2fx" % (medians["shelf"] / medians["ptc"]) if "ptc" in medians and medians["ptc"] > 0 and workload != "git_dirty" else ""
        fmt = "%d" if workload == "git_dirty" else "%.3f"
        print("| %s | " % label + " | ".join(fmt % medians[s] for s in systems) + " | %s |" % ratio)
    print()
