#!/usr/bin/env python3
"""Writes docs/bench-mount.md (to stdout) from the tab-separated results scripts/bench-mount
records, so that every figure and verdict on the page is computed from the run it describes:
  run KEY VALUE                        the invocation and the machine
  line WORKLOAD COMMAND                a workload's command line, as run in each system's root
  size N KEY VALUE...                  systems, mount times, commands, rounds' order, RSS, requests
  time N ROUND WORKLOAD SYSTEM SECONDS one timing"""
import collections
import statistics
import sys

SAVES_TARGET = 1.5      # 1,000 atomic saves at 10,000 items, against passthrough_ll's defaults
TARGET_SIZE = 10000
NAMES = {"native": "native", "shelf": "shelf", "pt": "passthrough_ll",
         "ptc": "passthrough_ll cache=always", "bindfs": "bindfs"}
WORKLOADS = [("cat1", "cat every file, first read"), ("cat2", "cat every file, again"),
             ("find", "find"), ("ls", "ls -lR"), ("grep", "grep -r"),
             ("index", "frontmatter indexer, first read"), ("saves", "1,000 temp-file + rename saves")]
HOW = {"cat": "after dropping the page cache, then once more straight after (\"again\")",
       "find": "after one untimed run", "ls": "after one untimed run",
       "grep": "after dropping the page cache", "index": "after dropping the page cache",
       "saves": "as it comes (temp file, `fsync`, rename over the original)"}
REQUESTS = [("cold", "one `cat` of a book after dropping the page cache"),
            ("again", "the same `cat` straight after"),
            ("listed", "the same `cat` after `ls -l` of its folder"),
            ("save", "one temp-file + rename save of it (`bench_saves.py FILE`)")]

run, lines = {}, {}
sizes = collections.OrderedDict()
times = collections.defaultdict(dict)  # (n, workload, system) -> {round: seconds}
for raw in open(sys.argv[1], encoding="utf-8"):
    field = raw.rstrip("\n").split("\t")
    if field[0] == "run":
        run[field[1]] = field[2]
    elif field[0] == "line":
        lines[field[1]] = field[2]
    elif field[0] == "size":
        size = sizes.setdefault(int(field[1]), collections.defaultdict(list))
        size[field[2]].append(field[3:])
    elif field[0] == "time":
        times[int(field[1]), field[3], field[4]][int(field[2])] = float(field[5])


if "baseline" in run:
    NAMES["base"] = "shelf at %s" % run["baseline"]


def median(n, workload, system):
    return statistics.median(times[n, workload, system].values())


def ratio(a, b):
    return a / b if b > 0 else float("inf")


def items(n):
    return "{:,}".format(n)


def systems(n):
    return sizes[n]["systems"][0][0].split()


out = []
say = out.append
say("# Mount benchmarks")
say("")
say("Written by `%s` on %s: %s cores, Linux %s, the work folder on %s, libfuse %s, %s, "
    "release build of %s. Load average when it started: %s." % (
        run["command"], run["date"], run["cores"], run["kernel"], run["fs"], run["libfuse"],
        run["bindfs"], run["commit"], run["load"]))
say("")
say("Times are in seconds, each the median of %s rounds. The systems run interleaved: a round runs "
    "every workload on every system before the next round starts, and the order of the systems "
    "rotates by one each round, so the drift of a shared VM falls on all of them alike. Shelf is "
    "mounted afresh before every round after the first: its daemon keeps the last saves' bytes, "
    "which dropping the page cache does not touch, and the next round's cold reads would find them. "
    "Ratios are shelf's median over the other system's." % run["runs"])
if "baseline" in run:
    say("")
    say("`shelf at %s` is Shelf built at commit %s (`BASELINE=%s`), its own library imported from "
        "the same CSV, mounted afresh with this commit's every round: the column `shelf / shelf at %s` "
        "is this commit's median over that one's." % ((run["baseline"],) * 4))
say("")
say("Systems, each over its own copy of the same generated tree (N books, `Books/`):")
say("")
seen = set()
for n in sizes:
    for system, command in sizes[n]["mount_command"]:
        if system not in seen:
            seen.add(system)
            say("- %s: `%s`" % (NAMES[system], command.replace("-%d" % n, "-N")))
say("")
say("passthrough_ll is libfuse's example built with `gcc -O2`; it keeps an open fd per inode, so "
    "above 20,000 items bindfs stands in for it.")
say("")
say("Workloads, each run in every system's root:")
say("")
say("| workload | command | when |")
say("|---|---|---|")
for key, label in [("cat", "cat every file")] + WORKLOADS[2:]:
    say("| %s | `%s` | %s |" % (label, lines[key].replace("|", "\\|"), HOW[key]))
say("")
say("Dropping the page cache is `sync; echo 3 > /proc/sys/vm/drop_caches`. FUSE requests are the "
    "daemon's reads of `/dev/fuse` under `strace -f -e trace=read`, named by opcode.")

say("")
say("## Saves target")
say("")
if TARGET_SIZE in sizes and "pt" in systems(TARGET_SIZE):
    n = TARGET_SIZE
    shelf, pt = median(n, "saves", "shelf"), median(n, "saves", "pt")
    per_round = [ratio(times[n, "saves", "shelf"][r], times[n, "saves", "pt"][r])
                 for r in sorted(times[n, "saves", "shelf"])]
    verdict = "met" if ratio(shelf, pt) <= SAVES_TARGET else "not met"
    say("Target: 1,000 atomic saves at 10,000 items within %.1fx of passthrough_ll at its defaults. "
        "Measured: %.3f s against %.3f s, **%.2fx: %s** (round by round: %s). Against native "
        "%.2fx, against passthrough_ll cache=always %.2fx." % (
            SAVES_TARGET, shelf, pt, ratio(shelf, pt), verdict,
            ", ".join("%.2fx" % value for value in per_round),
            ratio(shelf, median(n, "saves", "native")), ratio(shelf, median(n, "saves", "ptc"))))
    if (n, "drain", "shelf") in times:
        say("")
        say("A save's rename returns once its bytes are in the journal; the store commits it on the "
            "saves thread right after. `shelf status` run as the last rename returned (it first has "
            "the mount commit everything pending) took %.3f s, against %.3f s with nothing pending: "
            "the store keeps up with the saves." % (median(n, "drain", "shelf"), median(n, "idle_status", "shelf")))
else:
    say("Target: 1,000 atomic saves at 10,000 items within %.1fx of passthrough_ll at its defaults. "
        "Not measured by this run (it had no 10,000-item size)." % SAVES_TARGET)

for n in sizes:
    size, names = sizes[n], systems(n)
    others = names[2:]
    mounts = [float(value[0]) for value in size["mount_time"]]
    say("")
    say("## %s items" % items(n))
    say("")
    say("Shelf mounted and answering (`shelf mount` from a dropped page cache until `Books/` "
        "answers): %.3f s, the median of %d mounts (%s). Resident memory after the rounds: %s." % (
            statistics.median(mounts), len(mounts), ", ".join("%.3f" % m for m in mounts),
            ", ".join("%s %s" % (NAMES[s], v) for s, v in size["rss"])))
    say("")
    header = ["workload"] + [NAMES[s] for s in names] + ["shelf / %s" % NAMES[s] for s in
                                                         ["native"] + others]
    say("| " + " | ".join(header) + " |")
    say("|" + "---|" * len(header))
    for key, label in WORKLOADS:
        values = {s: median(n, key, s) for s in names}
        cells = ["%.3f" % values[s] for s in names]
        cells += ["%.2fx" % ratio(values["shelf"], values[s]) for s in ["native"] + others]
        say("| %s | %s |" % (label, " | ".join(cells)))
    say("")
    requests = {(s, kind): value for s, kind, value in size["requests"]}
    fuse = names[1:]
    say("FUSE requests:")
    say("")
    say("| for | " + " | ".join(NAMES[s] for s in fuse) + " |")
    say("|---|" + "---|" * len(fuse))
    for kind, label in REQUESTS:
        say("| %s | %s |" % (label, " | ".join(requests.get((s, kind), "n/a") for s in fuse)))
    say("")
    rounds = sorted({r for (m, _, _), values in times.items() if m == n for r in values})
    say("<details><summary>Every round at %s items (system order per round: %s)</summary>" % (
        items(n), "; ".join("%s: %s" % (r, ", ".join(NAMES[s] for s in order.split()))
                            for r, order in size["order"])))
    say("")
    say("| workload | round | " + " | ".join(NAMES[s] for s in names) + " |")
    say("|---|---|" + "---|" * len(names))
    for key, label in WORKLOADS:
        for r in rounds:
            say("| %s | %d | %s |" % (label, r, " | ".join("%.3f" % times[n, key, s][r] for s in names)))
    say("")
    say("</details>")

say("")
say("What these numbers mean, the paths the mount uses and where the time goes: "
    "[mount-performance.md](mount-performance.md).")
print("\n".join(out))
