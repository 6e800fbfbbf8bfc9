#!/usr/bin/env python3
"""Writes docs/bench-sync.md (to stdout) from the tab-separated results scripts/bench-sync
records, so that every figure and verdict on the page is computed from the run it describes:
  run KEY VALUE                              the invocation and the machine
  setting LABEL POLL COMMAND KIND            a propagation setting: its --poll-interval, its mount,
                                             its kind of cloud (plain or encrypted)
  setting_rss LABEL A_MB B_MB                its daemons' resident memory after the saves
  setting_files LABEL COUNT                  the change-log files its cloud held at the end
  save LABEL ROUND SAVE LATENCY READS        one save (bench_sync_saves.py)
  size N KEY VALUE                           N items as exported: files, bytes
  cloud N KIND KEY VALUE                     the cloud of N items of that kind: set-up times
  link N KIND ROUND LINK MOUNT LIST TOTAL WALKS FILES BYTES   a new device (bench_sync_link.py)
  rss N KIND ROUND WHEN MB                   its mount daemon's resident memory
  order N ROUND KIND:WORKLOAD...             the order of the read workloads in that round
  read N KIND ROUND WORKLOAD SECONDS         one timed read
  check N KIND ROUND KEY VALUE               what the reads left behind
The encrypted cloud is compared with the plain one: propagation with the plain setting at the same
--poll-interval, links and placeholder reads round by round (ENCRYPTED_TARGET)."""
import collections
import math
import statistics
import sys

P50_TARGET, P99_TARGET = 0.5, 1.0
LINK_TARGET, LINK_SIZE = 5.0, 10000
READ_TARGET = 3.0
ENCRYPTED_TARGET = 1.2  # the encrypted cloud's figure over the plain one's
BIG_SIZE, MOUNT_TARGET, RSS_TARGET = 100000, 2.0, 200.0
NAMES = {"default": "default", "fast": "faster", "encrypted": "encrypted cloud"}
FILL_BATCH = 256  # SyncEngine.fillBatch
READS = [("placeholders", "`cat` every placeholder of the new device (first reads download)"),
         ("downloaded", "`cat` every file of a device linked with `--download all`"),
         ("download_all", "`shelf download --all` on another new device (no mount)")]
BUCKETS = [0.1 * i for i in range(1, 11)]
run, settings, setting_rss, setting_files = {}, collections.OrderedDict(), {}, {}
saves = collections.defaultdict(list)  # label -> [(round, save, latency or None, reads)]
sizes = collections.OrderedDict()      # n -> {key: value}
clouds = collections.defaultdict(dict)  # (n, kind) -> {key: value}
kinds = []                             # the kinds of cloud, in the order the run names them
links = collections.defaultdict(dict)  # (n, kind) -> {round: (link, mount, list, total, walks, files, bytes)}
rss = collections.defaultdict(dict)    # (n, kind, when) -> {round: MB}
orders = collections.defaultdict(dict)  # n -> {round: [(kind, workload)]}
reads = collections.defaultdict(dict)  # (n, kind, workload) -> {round: seconds}
checks = collections.defaultdict(dict)  # (n, kind, key) -> {round: value}
for raw in open(sys.argv[1], encoding="utf-8"):
    field = raw.rstrip("\n").split("\t")
    kind = field[0]
    if kind == "run":
        run[field[1]] = field[2]
    elif kind == "setting":
        settings[field[1]] = (field[2], field[3], field[4])
    elif kind == "setting_rss":
        setting_rss[field[1]] = (field[2], field[3])
    elif kind == "setting_files":
        setting_files[field[1]] = int(field[2])
    elif kind == "save":
        latency = None if field[4] == "timeout" else float(field[4])
        saves[field[1]].append((int(field[2]), float(field[3]), latency, int(field[5])))
    elif kind == "size":
        sizes.setdefault(int(field[1]), {})[field[2]] = field[3]
    elif kind == "cloud":
        clouds[int(field[1]), field[2]][field[3]] = field[4]
        if field[2] not in kinds:
            kinds.append(field[2])
    elif kind == "link":
        links[int(field[1]), field[2]][int(field[3])] = \
            tuple(float(v) for v in field[4:8]) + tuple(int(v) for v in field[8:11])
    elif kind == "rss":
        rss[int(field[1]), field[2], field[4]][int(field[3])] = float(field[5]) if field[5] != "n/a" else float("nan")
    elif kind == "order":
        orders[int(field[1])][int(field[2])] = [tuple(item.split(":", 1)) for item in field[3].split()]
    elif kind == "read":
        reads[int(field[1]), field[2], field[4]][int(field[3])] = float(field[5])
    elif kind == "check":
        checks[int(field[1]), field[2], field[4]][int(field[3])] = field[5]


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


def spread(values, form="%.3f", unit=" s"):
    """The lowest and highest of a figure's rounds."""
    return "%s–%s%s" % (form % min(values), form % max(values), unit)


def kind_name(kind):
    return "%s cloud" % kind


def setting_name(label):
    return NAMES.get(label, label)


def plain_peer(label):
    """The plain setting at the same --poll-interval as `label`, which its cloud is compared with."""
    poll = settings[label][0]
    return next((other for other, (value, _, kind) in settings.items()
                 if kind == PLAIN and value == poll and saves[other]), None)


def blocks(label):
    """A setting's saves in RUNS consecutive blocks of rounds (the run's drift)."""
    rows, count = saves[label], int(run["runs"])
    return [rows[b * len(rows) // count:(b + 1) * len(rows) // count] for b in range(count)
            if rows[b * len(rows) // count:(b + 1) * len(rows) // count]]


def block_percentile(chunk, q):
    return percentile([l if l is not None else float("inf") for _, _, l, _ in chunk], q)


def paired(table, other):
    """Round-by-round ratios of one cloud's figure over another's (rounds both have)."""
    return [ratio(table[r], other[r]) for r in sorted(table) if r in other]


def against_plain(value, plain, ratios, what):
    """A ratio of medians with its spread: the ratios round by round (or block by block)."""
    return "%.2fx (%s against %s; %s %s)" % (ratio(value, plain), fmt(value), fmt(plain), what,
                                            spread(ratios, "%.2f", "x") if ratios else "n/a")


PLAIN = "plain"


out = []
say = out.append
say("# Sync benchmarks")
say("")
say("Written by `%s` on %s: %s cores (%s), %s of memory, Linux %s, the work folder on %s, "
    "libfuse %s, %s, release build of %s. Load average when it started: %s%s." % (
        run["command"], run["date"], run["cores"], run["cpu"], run["memory"], run["kernel"],
        run["fs"], run["libfuse"], run["swift"], run["commit"], run["load"],
        "; when it ended: %s" % run["load_end"] if "load_end" in run else ""))
say("")
say("Every device is a library on this machine, linked to a cloud folder on the same disk and "
    "mounted with `shelf mount` (a daemon per device). Every measurement runs on a plain cloud and "
    "on an encrypted one (`shelf cloud link --encrypt`: everything in the cloud sealed with "
    "AES-256-GCM under a data key only its devices hold) in the same run, side by side. The page cache is dropped "
    "(`sync; echo 3 > /proc/sys/vm/drop_caches`) before every timed link and read.")

# Summary
say("")
say("## Summary")
say("")
say("| target | measured | verdict |")
say("|---|---|---|")
for label, (poll, _, kind) in settings.items():
    if not saves[label]:
        continue
    say("| propagation p50 ≤ %.1f s, `--poll-interval` %s (%s) | %s | %s |" % (
        P50_TARGET, poll, setting_name(label), fmt(p(label, 50)), verdict(p(label, 50) <= P50_TARGET)))
    say("| propagation p99 ≤ %.1f s, `--poll-interval` %s (%s) | %s | %s |" % (
        P99_TARGET, poll, setting_name(label), fmt(p(label, 99)), verdict(p(label, 99) <= P99_TARGET)))
for label, (poll, _, kind) in settings.items():
    peer = plain_peer(label) if kind != PLAIN and saves[label] else None
    if not peer:
        continue
    for q in (50, 99):
        ratios = [ratio(block_percentile(mine, q), block_percentile(theirs, q))
                  for mine, theirs in zip(blocks(label), blocks(peer))]
        say("| propagation p%d, %s within %.1fx of the %s one (`--poll-interval` %s on both) | %s | %s |" % (
            q, kind_name(kind), ENCRYPTED_TARGET, PLAIN, poll,
            against_plain(p(label, q), p(peer, q), ratios, "block by block"),
            verdict(ratio(p(label, q), p(peer, q)) <= ENCRYPTED_TARGET)))
for n in sizes:
    for kind in kinds:
        totals = {r: v[3] for r, v in links[n, kind].items()}
        total = median_of(totals)
        complete = all(v[5] == int(sizes[n]["files"]) and v[6] == int(sizes[n]["bytes"])
                       for v in links[n, kind].values())
        measured = "%s (rounds %s)%s" % (fmt(total), spread(totals.values()), "" if complete else " (listing incomplete)")
        if n == LINK_SIZE:
            say("| new device at %s items, %s: link until the mount lists every placeholder ≤ %.0f s | %s | %s |" % (
                items(n), kind_name(kind), LINK_TARGET, measured, verdict(total <= LINK_TARGET and complete)))
        else:
            say("| new device at %s items, %s: link until the mount lists every placeholder | %s | no target |" % (
                items(n), kind_name(kind), measured))
        if n == BIG_SIZE:
            mounts = {r: v[1] for r, v in links[n, kind].items()}
            mount = median_of(mounts)
            memory = max(rss[n, kind, "listed"].values())
            say("| new device at %s items, %s: the mount answers ≤ %.0f s | %s (rounds %s) | %s |" % (
                items(n), kind_name(kind), MOUNT_TARGET, fmt(mount), spread(mounts.values()),
                verdict(mount <= MOUNT_TARGET)))
            say("| new device at %s items, %s: mount daemon resident < %.0f MB | %.0f MB (largest of %d rounds, "
                "after listing) | %s |" % (items(n), kind_name(kind), RSS_TARGET, memory,
                                           len(rss[n, kind, "listed"]), verdict(memory < RSS_TARGET)))
        if reads[n, kind, "placeholders"]:
            placeholders, downloaded = median_of(reads[n, kind, "placeholders"]), median_of(reads[n, kind, "downloaded"])
            say("| %s items, %s: reading every placeholder within %.0fx of reading them downloaded | %.2fx "
                "(%.2f s against %.2f s; rounds %s) | %s |" % (
                    items(n), kind_name(kind), READ_TARGET, ratio(placeholders, downloaded), placeholders, downloaded,
                    spread(paired(reads[n, kind, "placeholders"], reads[n, kind, "downloaded"]), "%.2f", "x"),
                    verdict(ratio(placeholders, downloaded) <= READ_TARGET)))
    for kind in kinds:
        if kind == PLAIN or not links[n, PLAIN]:
            continue
        mine = {r: v[3] for r, v in links[n, kind].items()}
        theirs = {r: v[3] for r, v in links[n, PLAIN].items()}
        measured = against_plain(median_of(mine), median_of(theirs), paired(mine, theirs), "round by round")
        say("| new device at %s items: link until listed, %s within %.1fx of the %s one | %s | %s |" % (
            items(n), kind_name(kind), ENCRYPTED_TARGET, PLAIN, measured,
            verdict(ratio(median_of(mine), median_of(theirs)) <= ENCRYPTED_TARGET) if n == LINK_SIZE else "no target"))
        if reads[n, kind, "placeholders"] and reads[n, PLAIN, "placeholders"]:
            mine, theirs = reads[n, kind, "placeholders"], reads[n, PLAIN, "placeholders"]
            say("| %s items: reading every placeholder, %s within %.1fx of the %s one | %s | %s |" % (
                items(n), kind_name(kind), ENCRYPTED_TARGET, PLAIN,
                against_plain(median_of(mine), median_of(theirs), paired(mine, theirs), "round by round"),
                verdict(ratio(median_of(mine), median_of(theirs)) <= ENCRYPTED_TARGET)))
say("")
say("Propagation figures are percentiles over every recorded save; the others are medians of %s "
    "rounds, with the lowest and highest round (or, for a ratio of two clouds, the lowest and highest "
    "ratio of the two clouds' figures in one round, or in one block of saves) in brackets." % run["runs"])

# Propagation
if saves:
    say("")
    say("## Propagation: a save on one device until another device's mount reads it")
    say("")
    encrypted = [label for label, (_, _, kind) in settings.items() if kind != PLAIN]
    say("Per setting, a cloud of its own and two devices: A imports `samples/library` and links "
        "to a new cloud folder, B links to the cloud empty; both are mounted, at the setting's "
        "`--poll-interval`, and stay mounted for the whole run.%s A save opens `Books/Meditations - Marcus Aurelius.md` on A's mount "
        "for writing (`O_TRUNC`), writes it with a new `current_page:` (a real edit of the record) "
        "and closes it; the clock starts when `close()` returns and stops when a read of the same "
        "file on B's mount returns exactly those bytes. B's reader opens, reads and closes the "
        "file again and again, %s between reads. The settings run round by round, side by side: "
        "in each round every setting saves (each in a thread of its own), and the next round "
        "starts when every save has arrived, so all meet the same machine. Before its save, "
        "each setting waits a random time (up to 0.25 s or its poll interval), so saves do not "
        "fall into step with anything periodic in the mounts (a person's saves come at any "
        "moment). 2 warm-up rounds are not counted (B's "
        "first read downloads its placeholder). %s saves per setting "
        "(`scripts/bench_sync_saves.py`)." % (
            "".join(" In the %s setting A makes the cloud with `shelf cloud link "
                    "--encrypt`, B links with the passphrase (`SHELF_CLOUD_PASSPHRASE_FILE`, a file "
                    "in the work folder), and both mount it at `shelf mount`'s default "
                    "`--poll-interval` (%s s), like the default setting's plain cloud." % (
                        setting_name(label), settings[label][0]) for label in encrypted),
            "with no pause" if float(run["pause"]) == 0 else "%g ms" % (float(run["pause"]) * 1000),
            run["saves"]))
    say("")
    say("| setting | mount command | saves | p50 | p90 | p99 | max | mean | timeouts (30 s) | "
        "`close()` of the save, median | B's reads per wait, median | daemons' memory after (A, B) |")
    say("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, (poll, command, _) in settings.items():
        values = latencies(label)
        if not saves[label]:
            continue
        say("| %s: `--poll-interval` %s | `%s` | %d | %s | %s | %s | %s | %s | %d | %.1f ms | %d | %s MB, %s MB |" % (
            setting_name(label), poll, command, len(saves[label]), fmt(p(label, 50)), fmt(p(label, 90)),
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
        "for a cloud whose changes cannot be watched (a network share), which is why the default "
        "and the faster setting measure alike here. On an encrypted cloud the push seals the batch "
        "(and any new content) with the cloud's data key and the pull opens it: AES-GCM, no key "
        "derivation (that happens only at link).")
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
        say("| %s | %s |" % (setting_name(label), " | ".join(str(c) for c in counts)))
    say("")
    say("The same saves in %s consecutive blocks, to show drift over the run (each device writes "
        "a change-log file per pushed batch, and every sync round lists the log folders; at the end "
        "the clouds held %s change-log files):" % (
            run["runs"], ", ".join("%s %d" % (setting_name(l), c) for l, c in setting_files.items())))
    say("")
    say("| setting | saves | p50 | p99 |")
    say("|---|---|---|---|")
    for label in settings:
        for chunk in blocks(label):
            say("| %s | %d–%d | %s | %s |" % (setting_name(label), chunk[0][0], chunk[-1][0],
                                             fmt(block_percentile(chunk, 50)), fmt(block_percentile(chunk, 99))))

# Linking and reading
for n in sizes:
    size = sizes[n]
    files = int(size["files"])
    say("")
    say("## A new device joins a cloud of %s items" % items(n))
    say("")
    say("The clouds: %s libraries of the same %s generated Goodreads books (`scripts/make-goodreads-csv.py`, "
        "%s files, %s bytes as exported), each linked to a new cloud folder of its kind, which "
        "uploaded them: %s. Each round links a new, empty library to each cloud, in an order "
        "rotated by the round, and mounts it (`scripts/bench_sync_link.py`): `shelf cloud link` "
        "(its first sync brings every item's metadata; on the encrypted cloud it first unwraps "
        "the data key with the passphrase), `shelf mount` (returns once the mount answers) and "
        "one `stat` of `Books/`, then walks of the mount like `ls -R` (hidden names left out, "
        "every file's size read) until it finds every file with the exported sizes." % (
            {1: "one", 2: "two", 3: "three"}.get(len(kinds), str(len(kinds))), items(n),
            items(files), items(int(size["bytes"])),
            ", ".join("the %s (%s) in %s s" % (kind_name(kind), "`shelf cloud link --encrypt`" if kind != PLAIN
                                                else "`shelf cloud link`", clouds[n, kind]["upload"])
                      for kind in kinds)))
    say("")
    say("| round | cloud | link | mount | list | link until listed | walks | files found | bytes found | "
        "daemon resident after listing |")
    say("|---|---|---|---|---|---|---|---|---|---|")
    rounds = sorted(set(r for kind in kinds for r in links[n, kind]))
    for r in rounds:
        for kind in kinds:
            if r not in links[n, kind]:
                continue
            v = links[n, kind][r]
            say("| %d | %s | %.3f | %.3f | %.3f | %.3f | %d | %s | %s | %.0f MB |" % (
                r, kind, v[0], v[1], v[2], v[3], v[4], items(v[5]), items(v[6]),
                rss[n, kind, "listed"].get(r, float("nan"))))
    for kind in kinds:
        say("| **median** | %s | %s | | | | %.0f MB |" % (kind, " | ".join(
            "%.3f" % statistics.median(v[i] for v in links[n, kind].values()) for i in range(4)),
            median_of(rss[n, kind, "listed"])))
    if not any(reads[n, kind, "placeholders"] for kind in kinds):
        say("")
        say("Reads are not measured at this size (only up to 20,000 items).")
        continue
    say("")
    say("### Reading every file: placeholders against downloaded bytes")
    say("")
    say("Workloads, on each cloud, each after dropping the page cache; every workload runs on the "
        "clouds one right after the other, and the order rotates every round:")
    say("")
    for key, label in READS:
        say("- %s%s" % (label, {
            "placeholders": ": the device the round just linked to that cloud, still mounted; `%s` in its mount" % run["cat"],
            "downloaded": " to the same cloud (`shelf cloud link --download all`, which took %s once at set-up), "
                          "mounted afresh for each round; the same `%s`" % (
                              ", ".join("%s s on the %s" % (clouds[n, kind].get("link_download_all", "?"), kind_name(kind))
                                        for kind in kinds), run["cat"]),
            "download_all": ": the downloads themselves, %d to a transaction, with no mount and no "
                            "kernel in the way" % FILL_BATCH}[key]))
    say("")
    say("| workload | " + " | ".join("%s: median | per file | / downloaded" % kind for kind in kinds) +
        "".join(" | %s / %s" % (kind, PLAIN) for kind in kinds if kind != PLAIN) + " |")
    say("|---|" + "---|---|---|" * len(kinds) + "---|" * sum(1 for kind in kinds if kind != PLAIN))
    for key, label in READS:
        cells = []
        for kind in kinds:
            value, downloaded = median_of(reads[n, kind, key]), median_of(reads[n, kind, "downloaded"])
            cells.append("%.3f s | %.2f ms | %.2fx" % (value, 1000 * value / files, ratio(value, downloaded)))
        cells += ["%.2fx" % ratio(median_of(reads[n, kind, key]), median_of(reads[n, PLAIN, key]))
                  for kind in kinds if kind != PLAIN]
        say("| %s | %s |" % (label, " | ".join(cells)))
    for kind in kinds:
        placeholders, downloaded = median_of(reads[n, kind, "placeholders"]), median_of(reads[n, kind, "downloaded"])
        download_all = median_of(reads[n, kind, "download_all"])
        say("")
        say("On the %s, reading the placeholders costs %.2f ms a file more than reading downloaded files: "
            "fetching each file's bytes from the cloud%s and checking their hash. Putting them in the "
            "store, which `shelf download --all` does for %.2f ms a file without a mount, follows on the "
            "mount's filler thread." % (kind_name(kind), 1000 * (placeholders - downloaded) / files,
                                        ", opening them (AES-GCM)" if kind != PLAIN else "",
                                        1000 * download_all / files))
    stored = [(kind, median_of(reads[n, kind, "placeholders_stored"]), median_of(reads[n, kind, "placeholders"]),
               median_of(reads[n, kind, "downloaded"])) for kind in kinds if reads[n, kind, "placeholders_stored"]]
    if stored:
        say("")
        say("The `cat` is done when its last read is answered: a download answers its readers once "
            "the bytes are fetched and checked, and the mount's filler thread puts them in the store "
            "(parsed and indexed) many to a transaction. `shelf cloud status` run as the `cat` ended, "
            "which first has the mount store whatever is still pending, took %s. Every workload starts "
            "once every mount of the round is idle (each daemon's CPU time still for a second), the "
            "ones just linked included, so no daemon's late work lands in another workload's time." % "; ".join(
                "%.3f s on the %s: every download was in the store %.2fx the downloaded `cat`'s time after "
                "the reads began" % (seconds, kind_name(kind), ratio(placeholders + seconds, downloaded))
                for kind, seconds, placeholders, downloaded in stored))
    say("")
    say("Checks: %s." % "; ".join(
        "on the %s, placeholders left on the read device after the `cat`: %s; placeholders left after "
        "`shelf download --all`: %s; the bytes read through both mounts, against the exported "
        "files (its source's export): %s; mount daemon resident after reading every placeholder: %s" % (
            kind_name(kind), ", ".join(sorted(set(checks[n, kind, "placeholders_left"].values()))),
            ", ".join(sorted(set(checks[n, kind, "download_all_left"].values()))),
            " / ".join(sorted(set(checks[n, kind, "placeholders_bytes"].values()) |
                              set(checks[n, kind, "downloaded_bytes"].values()))),
            ", ".join("%.0f MB" % rss[n, kind, "read"][r] for r in sorted(rss[n, kind, "read"])))
        for kind in kinds))
    say("")
    say("<details><summary>Every round at %s items (order per round: %s)</summary>" % (
        items(n), "; ".join("%d: %s" % (r, ", ".join("%s %s" % item for item in o))
                            for r, o in sorted(orders[n].items()))))
    say("")
    say("| round | cloud | " + " | ".join(key for key, _ in READS) + " | placeholders / downloaded |")
    say("|---|---|" + "---|" * len(READS) + "---|")
    for r in sorted(orders[n]):
        for kind in kinds:
            say("| %d | %s | %s | %.2fx |" % (r, kind, " | ".join("%.3f" % reads[n, kind, key][r] for key, _ in READS),
                                              ratio(reads[n, kind, "placeholders"][r], reads[n, kind, "downloaded"][r])))
    say("")
    say("</details>")

print("\n".join(out))
