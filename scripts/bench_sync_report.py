#!/usr/bin/env python3
"""Writes docs/bench-sync.md (to stdout) from the tab-separated results scripts/bench-sync
records, so that every figure and verdict on the page is computed from the run it describes:
  run KEY VALUE                              the invocation and the machine
  setting LABEL POLL COMMAND                 a propagation setting: its --poll-interval, its mount
  setting_rss LABEL A_MB B_MB                its daemons' resident memory after the saves
  setting_files LABEL COUNT                  the change-log files its cloud held at the end
  save LABEL ROUND SAVE LATENCY READS        one save (bench_sync_saves.py)
  size N KEY VALUE                           a cloud of N items: files, bytes, set-up times
  link N ROUND LINK MOUNT LIST TOTAL WALKS FILES BYTES   a new device (bench_sync_link.py)
  rss N ROUND WHEN MB                        its mount daemon's resident memory
  order N ROUND ORDER                        the order of the read workloads in that round
  read N ROUND WORKLOAD SECONDS              one timed read
  check N ROUND KEY VALUE                    what the reads left behind"""
import collections
import math
import statistics
import sys

P50_TARGET, P99_TARGET = 0.5, 1.0
LINK_TARGET, LINK_SIZE = 5.0, 10000
READ_TARGET = 3.0
BIG_SIZE, MOUNT_TARGET, RSS_TARGET = 100000, 2.0, 200.0
NAMES = {"default": "default", "fast": "faster"}
FILL_BATCH = 256  # SyncEngine.fillBatch
READS = [("placeholders", "`cat` every placeholder of the new device (first reads download)"),
         ("downloaded", "`cat` every file of a device linked with `--download all`"),
         ("download_all", "`shelf download --all` on another new device (no mount)")]
BUCKETS = [0.1 * i for i in range(1, 11)]
run, settings, setting_rss, setting_files = {}, collections.OrderedDict(), {}, {}
saves = collections.defaultdict(list)  # label -> [(round, save, latency or None, reads)]
sizes = collections.OrderedDict()      # n -> {key: value}
links = collections.defaultdict(dict)  # n -> {round: (link, mount, list, total, walks, files, bytes)}
rss = collections.defaultdict(dict)    # (n, when) -> {round: MB}
orders = collections.defaultdict(dict)
reads = collections.defaultdict(dict)  # (n, workload) -> {round: seconds}
checks = collections.defaultdict(dict)  # (n, key) -> {round: value}
for raw in open(sys.argv[1], encoding="utf-8"):
    field = raw.rstrip("\n").split("\t")
    kind = field[0]
    if kind == "run":
        run[field[1]] = field[2]
    elif kind == "setting":
        settings[field[1]] = (field[2], field[3])
    elif kind == "setting_rss":
        setting_rss[field[1]] = (field[2], field[3])
    elif kind == "setting_files":
        setting_files[field[1]] = int(field[2])
    elif kind == "save":
        latency = None if field[4] == "timeout" else float(field[4])
        saves[field[1]].append((int(field[2]), float(field[3]), latency, int(field[5])))
    elif kind == "size":
        sizes.setdefault(int(field[1]), {})[field[2]] = field[3]
    elif kind == "link":
        links[int(field[1])][int(field[2])] = tuple(float(v) for v in field[3:7]) + tuple(int(v) for v in field[7:10])
    elif kind == "rss":
        rss[int(field[1]), field[3]][int(field[2])] = float(field[4]) if field[4] != "n/a" else float("nan")
    elif kind == "order":
        orders[int(field[1])][int(field[2])] = field[3].split()
    elif kind == "read":
        reads[int(field[1]), field[3]][int(field[2])] = float(field[4])
    elif kind == "check":
        checks[int(field[1]), field[3]][int(field[2])] = field[4]


def percentile(values, p):
    """Nearest rank: the smallest value with at least p percent of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def verdict(ok):
    return "**met**" if ok else "**not met**"


def items(n):
    return "{:,}".format(n)


def ratio(a, b):
    return a / b if b > 0 else float("inf")


def latencies(label):
    return [latency for _, _, latency, _ in saves[label] if latency is not None]


def timeouts(label):
    return sum(1 for _, _, latency, _ in saves[label] if latency is None)


def p(label, q):
    """Percentile q of a setting's propagation times, timeouts counting as infinitely slow."""
    values = latencies(label) + [float("inf")] * timeouts(label)
    return percentile(values, q)


def median_of(table):
    return statistics.median(table.values())


def fmt(seconds):
    return "%.3f s" % seconds if seconds != float("inf") else "timeout"


out = []
say = out.append
say("# Sync benchmarks")
say("")
say("Written by `%s` on %s: %s cores (%s), %s of memory, Linux %s, the work folder on %s, "
    "libfuse %s, %s, release build of %s. Load average when it started: %s." % (
        run["command"], run["date"], run["cores"], run["cpu"], run["memory"], run["kernel"],
        run["fs"], run["libfuse"], run["swift"], run["commit"], run["load"]))
say("")
say("Every device is a library on this machine, linked to a cloud folder on the same disk and "
    "mounted with `shelf mount` (a daemon per device). The page cache is dropped "
    "(`sync; echo 3 > /proc/sys/vm/drop_caches`) before every timed link and read.")

# Summary
say("")
say("## Summary")
say("")
say("| target | measured | verdict |")
say("|---|---|---|")
for label, (poll, _) in settings.items():
    if not saves[label]:
        continue
    say("| propagation p50 ≤ %.1f s, `--poll-interval` %s (%s) | %s | %s |" % (
        P50_TARGET, poll, NAMES.get(label, label), fmt(p(label, 50)), verdict(p(label, 50) <= P50_TARGET)))
    say("| propagation p99 ≤ %.1f s, `--poll-interval` %s (%s) | %s | %s |" % (
        P99_TARGET, poll, NAMES.get(label, label), fmt(p(label, 99)), verdict(p(label, 99) <= P99_TARGET)))
for n in sizes:
    total = statistics.median(v[3] for v in links[n].values())
    complete = all(v[5] == int(sizes[n]["files"]) and v[6] == int(sizes[n]["bytes"]) for v in links[n].values())
    if n == LINK_SIZE:
        say("| new device at %s items: link until the mount lists every placeholder ≤ %.0f s | %s | %s |" % (
            items(n), LINK_TARGET, fmt(total), verdict(total <= LINK_TARGET and complete)))
    else:
        say("| new device at %s items: link until the mount lists every placeholder | %s%s | no target |" % (
            items(n), fmt(total), "" if complete else " (listing incomplete)"))
    if n == BIG_SIZE:
        mount = statistics.median(v[1] for v in links[n].values())
        memory = max(rss[n, "listed"].values())
        say("| new device at %s items: the mount answers ≤ %.0f s | %s | %s |" % (
            items(n), MOUNT_TARGET, fmt(mount), verdict(mount <= MOUNT_TARGET)))
        say("| new device at %s items: mount daemon resident < %.0f MB | %.0f MB (largest of %d rounds, "
            "after listing) | %s |" % (items(n), RSS_TARGET, memory, len(rss[n, "listed"]),
                                       verdict(memory < RSS_TARGET)))
    if reads[n, "placeholders"]:
        placeholders, downloaded = median_of(reads[n, "placeholders"]), median_of(reads[n, "downloaded"])
        say("| %s items: reading every placeholder within %.0fx of reading them downloaded | %.2fx "
            "(%.2f s against %.2f s) | %s |" % (items(n), READ_TARGET, ratio(placeholders, downloaded),
                                               placeholders, downloaded,
                                               verdict(ratio(placeholders, downloaded) <= READ_TARGET)))
say("")
say("Propagation figures are percentiles over every recorded save; the others are medians of %s "
    "rounds." % run["runs"])

# Propagation
if saves:
    say("")
    say("## Propagation: a save on one device until another device's mount reads it")
    say("")
    say("Per setting, a cloud of its own and two devices: A imports `samples/library`, B links to "
        "the cloud empty; both are mounted, at the setting's `--poll-interval`, and stay mounted "
        "for the whole run. A save opens `Books/Meditations - Marcus Aurelius.md` on A's mount "
        "for writing (`O_TRUNC`), writes it with a new `current_page:` (a real edit of the record) "
        "and closes it; the clock starts when `close()` returns and stops when a read of the same "
        "file on B's mount returns exactly those bytes. B's reader opens, reads and closes the "
        "file again and again, %s between reads. The settings run round by round, side by side: "
        "in each round both settings save (each in a thread of its own), and the next round "
        "starts when both saves have arrived, so both meet the same machine. Before its save, "
        "each setting waits a random time (up to 0.25 s or its poll interval), so saves do not "
        "fall into step with anything periodic in the mounts (a person's saves come at any "
        "moment). 2 warm-up rounds are not counted (B's "
        "first read downloads its placeholder). %s saves per setting "
        "(`scripts/bench_sync_saves.py`)." % (
            "with no pause" if float(run["pause"]) == 0 else "%g ms" % (float(run["pause"]) * 1000),
            run["saves"]))
    say("")
    say("| setting | mount command | saves | p50 | p90 | p99 | max | mean | timeouts (30 s) | "
        "`close()` of the save, median | B's reads per wait, median | daemons' memory after (A, B) |")
    say("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, (poll, command) in settings.items():
        values = latencies(label)
        if not saves[label]:
            continue
        say("| %s: `--poll-interval` %s | `%s` | %d | %s | %s | %s | %s | %s | %d | %.1f ms | %d | %s MB, %s MB |" % (
            NAMES.get(label, label), poll, command, len(saves[label]), fmt(p(label, 50)), fmt(p(label, 90)),
            fmt(p(label, 99)), fmt(max(values) if values else float("inf")),
            fmt(statistics.mean(values)) if values else "n/a", timeouts(label),
            1000 * statistics.median(s for _, s, _, _ in saves[label]),
            statistics.median(r for _, _, _, r in saves[label]), *setting_rss.get(label, ("n/a", "n/a"))))
    say("")
    say("How a save travels: A's mount commits it when the file is closed; the commit wakes A's "
        "sync (inotify on the library's database), which pushes it into the cloud folder; the new "
        "batch file wakes B's sync (inotify on the cloud's change folders), which pulls it into B's "
        "library; that commit wakes B's change follower, which invalidates the kernel's cache of "
        "the file, and the next read gets the new bytes. The poll interval is only the fallback "
        "for a cloud whose changes cannot be watched (a network share), which is why both settings "
        "measure alike here.")
    say("")
    say("How the times spread (saves per band of propagation time):")
    say("")
    bands = ["< %.1f s" % BUCKETS[0]] + ["%.1f–%.1f s" % (a, b) for a, b in zip(BUCKETS, BUCKETS[1:])] + \
            ["≥ %.1f s" % BUCKETS[-1]]
    say("| setting | " + " | ".join(bands) + " |")
    say("|---|" + "---|" * len(bands))
    for label in settings:
        if not saves[label]:
            continue
        counts = [0] * len(bands)
        for value in latencies(label) + [float("inf")] * timeouts(label):
            counts[next((i for i, edge in enumerate(BUCKETS) if value < edge), len(BUCKETS))] += 1
        say("| %s | %s |" % (NAMES.get(label, label), " | ".join(str(c) for c in counts)))
    say("")
    blocks = int(run["runs"])
    say("The same saves in %d consecutive blocks, to show drift over the run (each device writes "
        "a change-log file per pushed batch, and every sync round lists the log folders; at the end "
        "the clouds held %s change-log files):" % (
            blocks, ", ".join("%s %d" % (NAMES.get(l, l), c) for l, c in setting_files.items())))
    say("")
    say("| setting | saves | p50 | p99 |")
    say("|---|---|---|---|")
    for label in settings:
        rows = saves[label]
        for b in range(blocks):
            chunk = rows[b * len(rows) // blocks:(b + 1) * len(rows) // blocks]
            if not chunk:
                continue
            values = [l if l is not None else float("inf") for _, _, l, _ in chunk]
            say("| %s | %d–%d | %s | %s |" % (NAMES.get(label, label), chunk[0][0], chunk[-1][0],
                                             fmt(percentile(values, 50)), fmt(percentile(values, 99))))

# Linking and reading
for n in sizes:
    size = sizes[n]
    say("")
    say("## A new device joins a cloud of %s items" % items(n))
    say("")
    say("The cloud: a library of %s generated Goodreads books (`scripts/make-goodreads-csv.py`, "
        "%s files, %s bytes as exported) linked to a new cloud folder, which uploaded them in %s s. "
        "Each round links a new, empty library to it and mounts it (`scripts/bench_sync_link.py`): "
        "`shelf cloud link` (its first sync brings every item's metadata), `shelf mount` (returns "
        "once the mount answers) and one `stat` of `Books/`, then walks of the mount like `ls -R` "
        "(hidden names left out, every file's size read) until it finds every file with the "
        "exported sizes." % (items(n), items(int(size["files"])), items(int(size["bytes"])), size["upload"]))
    say("")
    say("| round | link | mount | list | link until listed | walks | files found | bytes found | "
        "daemon resident after listing |")
    say("|---|---|---|---|---|---|---|---|---|")
    rounds = sorted(links[n])
    for r in rounds:
        v = links[n][r]
        say("| %d | %.3f | %.3f | %.3f | %.3f | %d | %s | %s | %.0f MB |" % (
            r, v[0], v[1], v[2], v[3], v[4], items(v[5]), items(v[6]), rss[n, "listed"].get(r, float("nan"))))
    say("| **median** | %s | | | | %.0f MB |" % (" | ".join(
        "%.3f" % statistics.median(links[n][r][i] for r in rounds) for i in range(4)),
        statistics.median(rss[n, "listed"].values())))
    if not reads[n, "placeholders"]:
        say("")
        say("Reads are not measured at this size (only up to 20,000 items).")
        continue
    say("")
    say("### Reading every file: placeholders against downloaded bytes")
    say("")
    say("Workloads, each after dropping the page cache; the order rotates every round:")
    say("")
    for key, label in READS:
        say("- %s%s" % (label, {
            "placeholders": ": the device the round just linked, still mounted; `%s` in its mount" % run["cat"],
            "downloaded": " (`shelf cloud link --download all`, which took %s s once at set-up), "
                          "mounted afresh for each round; the same `%s`" % (size.get("link_download_all", "?"), run["cat"]),
            "download_all": ": the downloads themselves, %d to a transaction, with no mount and no "
                            "kernel in the way" % FILL_BATCH}[key]))
    placeholders, downloaded = median_of(reads[n, "placeholders"]), median_of(reads[n, "downloaded"])
    download_all = median_of(reads[n, "download_all"])
    say("")
    say("| workload | median | per file | / downloaded |")
    say("|---|---|---|---|")
    files = int(size["files"])
    for key, label in READS:
        value = median_of(reads[n, key])
        say("| %s | %.3f s | %.2f ms | %.2fx |" % (label, value, 1000 * value / files, ratio(value, downloaded)))
    say("")
    say("Reading the placeholders costs %.2f ms a file more than reading downloaded files: fetching "
        "each file's bytes from the cloud and checking their hash. Putting them in the store, which "
        "`shelf download --all` does for %.2f ms a file without a mount, follows on the mount's "
        "filler thread." % (1000 * (placeholders - downloaded) / files, 1000 * download_all / files))
    if reads[n, "placeholders_stored"]:
        stored = median_of(reads[n, "placeholders_stored"])
        say("")
        say("The `cat` is done when its last read is answered: a download answers its readers once "
            "the bytes are fetched and checked, and the mount's filler thread puts them in the store "
            "(parsed and indexed) many to a transaction. `shelf cloud status` run as the `cat` ended, "
            "which first has the mount store whatever is still pending, took %.3f s: every download "
            "was in the store %.2fx the downloaded `cat`'s time after the reads began." % (
                stored, ratio(placeholders + stored, downloaded)))
    say("")
    left = ", ".join(sorted(set(checks[n, "placeholders_left"].values())))
    same = sorted(set(checks[n, "placeholders_bytes"].values()) | set(checks[n, "downloaded_bytes"].values()))
    say("Checks: placeholders left on the read device after the `cat`: %s; placeholders left after "
        "`shelf download --all`: %s; the bytes read through both mounts, against the exported "
        "files: %s. Mount daemon resident after reading every placeholder: %s." % (
            left, ", ".join(sorted(set(checks[n, "download_all_left"].values()))), " / ".join(same),
            ", ".join("%.0f MB" % rss[n, "read"][r] for r in sorted(rss[n, "read"]))))
    say("")
    say("<details><summary>Every round at %s items (order per round: %s)</summary>" % (
        items(n), "; ".join("%d: %s" % (r, ", ".join(o)) for r, o in sorted(orders[n].items()))))
    say("")
    say("| round | " + " | ".join(key for key, _ in READS) + " | placeholders / downloaded |")
    say("|---|" + "---|" * len(READS) + "---|")
    for r in sorted(orders[n]):
        say("| %d | %s | %.2fx |" % (r, " | ".join("%.3f" % reads[n, key][r] for key, _ in READS),
                                      ratio(reads[n, "placeholders"][r], reads[n, "downloaded"][r])))
    say("")
    say("</details>")

print("\n".join(out))
