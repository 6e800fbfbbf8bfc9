#!/usr/bin/env python3
"""Propagation between two mounts of one cloud: saves a file through device A's mount and times
how long until device B's mount reads exactly the bytes A wrote.

  bench_sync_saves.py SAVES WARMUP PAUSE LABEL=A_FILE,B_FILE,JITTER ...

Each setting (LABEL) runs in a thread of its own; round by round the settings start together
(a barrier), so every round of every setting meets the same machine, and the next round starts
when every setting's save of this one has arrived. In a round, a setting first waits a random
time in [0, JITTER) — the mounts sync on timers, and a save made straight after the previous one
arrived would keep hitting the same phase of them; a person's saves come at any moment — then
opens A_FILE for writing (O_TRUNC), writes the file with its `current_page:` set to a new number
(so every save is a real edit of the record), and closes it. The clock starts when close()
returns: from then on the save is Shelf's (read-your-writes on A). A loop then opens, reads and
closes B_FILE until it holds exactly those bytes, PAUSE seconds between reads (0: a tight loop,
which on a small machine takes a core from the daemons it measures). The WARMUP rounds before
the SAVES are not recorded (B's first read downloads its placeholder). Prints, per recorded save:
  save LABEL ROUND SAVE_SECONDS PROPAGATION_SECONDS READS
where READS is how many reads of B_FILE the wait took. A save not seen within 30 s prints
PROPAGATION_SECONDS as `timeout` and the run goes on with the next round."""
import random
import re
import sys
import threading
import time

TIMEOUT = 30.0


def main():
    saves, warmup, pause = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    settings = []
    for argument in sys.argv[4:]:
        label, values = argument.split("=", 1)
        a_file, b_file, jitter = values.rsplit(",", 2)
        settings.append((label, a_file, b_file, float(jitter)))
    barrier = threading.Barrier(len(settings))
    output = threading.Lock()
    threads = [threading.Thread(target=run, args=(setting, index, saves, warmup, pause, barrier, output))
               for index, setting in enumerate(settings)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def run(setting, index, saves, warmup, pause, barrier, output):
    label, a_file, b_file, jitter = setting
    with open(a_file, "rb") as handle:
        template = handle.read()
    rng = random.Random("%s-%d" % (label, index))
    counter = 1000
    for round_number in range(-warmup, saves):
        barrier.wait()
        counter += 1
        data = with_page(template, counter)
        time.sleep(rng.uniform(0, jitter))
        start = time.monotonic()
        with open(a_file, "wb") as handle:
            handle.write(data)
        saved = time.monotonic()
        reads, seen = 0, None
        while True:
            reads += 1
            try:
                with open(b_file, "rb") as handle:
                    if handle.read() == data:
                        seen = time.monotonic()
                        break
            except OSError:
                pass  # EIO while a download fails or times out: keep waiting
            if time.monotonic() - saved > TIMEOUT:
                break
            if pause:
                time.sleep(pause)
        if round_number < 0:
            continue
        latency = "%.6f" % (seen - saved) if seen else "timeout"
        with output:
            print("save\t%s\t%d\t%.6f\t%s\t%d" % (label, round_number + 1, saved - start, latency, reads), flush=True)
            if index == 0 and (round_number + 1) % 100 == 0:
                print("bench-sync: propagation, %d of %d saves per setting" % (round_number + 1, saves),
                      file=sys.stderr, flush=True)


def with_page(template, page):
    """The file with `current_page: PAGE` (added after `title:` where there was none)."""
    line = b"current_page: %d" % page
    if re.search(rb"(?m)^current_page: \d+$", template):
        return re.sub(rb"(?m)^current_page: \d+$", line, template, count=1)
    return re.sub(rb"(?m)^(title: .*)$", lambda m: m.group(1) + b"\n" + line, template, count=1)


if __name__ == "__main__":
    main()
