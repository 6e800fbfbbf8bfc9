#!/usr/bin/env python3
"""Large items through a Shelf mount, beside a plain file in the same mount and a native folder:
reading a whole item (seconds and MB/s by size), a random walk of writes with a close and reopen
about every eighth operation (fsx's reopen mode: each close commits an item), what 32 edited
versions of an 8 MiB item add to the library, a 2 GiB sparse write, and the daemon's peak resident
memory after each. Writes the report (Markdown) on stdout.

  bench_large_items.py MOUNT NATIVE LIBRARY DAEMON_PID SHELF_BIN COMMIT CONFIG
"""
import os
import random
import subprocess
import sys
import time

mount, native, library, pid, shelf, commit, config = sys.argv[1:8]
MiB = 1 << 20
SIZES = [1, 4, 8]
REOPEN_STEPS = 400


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def peak_mib():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return -1


def commit_saves():
    """Every save through the mount is committed once a `shelf` command returns (read your writes)."""
    subprocess.run([shelf, "status", "--library", library], check=True, stdout=subprocess.DEVNULL)


def text(size, seed):
    rng = random.Random(seed)
    line = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz  ") for _ in range(79)) + "\n"
    body = (line * (size // len(line) + 1)).encode()[:size - 20]
    return b"---\ntitle: Big\n---\n" + body[:size - 19]


def read_all(path):
    start = time.monotonic()
    with open(path, "rb", buffering=0) as f:
        while f.read(128 << 10):
            pass
    return time.monotonic() - start


def reopen_plan(seed):
    """fsx's reopen mode, reduced: random reads, writes and truncations in a 256 KiB file, with a
    close and reopen about every eighth operation (payloads made up front: not timed)."""
    rng = random.Random(seed)
    operations = []
    for _ in range(REOPEN_STEPS):
        draw = rng.random()
        if draw < 0.4:
            operations.append(("read", rng.randrange(0, 256 << 10), rng.randrange(1, 64 << 10)))
        elif draw < 0.5:
            operations.append(("truncate", rng.randrange(128 << 10, 256 << 10)))
        else:
            operations.append(("write", rng.randrange(0, 256 << 10), rng.randbytes(rng.randrange(1, 4096))))
        if rng.random() < 1 / 8:
            operations.append(("reopen",))
    return operations


def reopen_walk(path, seed):
    operations = reopen_plan(seed)
    with open(path, "wb") as f:
        f.write(text(256 << 10, seed))
    commit_saves()
    start = time.monotonic()
    fd = os.open(path, os.O_RDWR)
    for operation in operations:
        if operation[0] == "read":
            os.pread(fd, operation[2], operation[1])
        elif operation[0] == "truncate":
            os.ftruncate(fd, operation[1])
        elif operation[0] == "write":
            os.pwrite(fd, operation[2], operation[1])
        else:
            os.close(fd)
            fd = os.open(path, os.O_RDWR)
    os.close(fd)
    walked = time.monotonic() - start
    commit_saves()  # every close's commit done: the item's last save is in the store
    return walked, time.monotonic() - start


def library_bytes():
    return sum(os.path.getsize(os.path.join(library, name)) for name in os.listdir(library)
               if name.startswith("shelf.sqlite"))


out = [f"# Large items: bench-large-items\n",
       f"Measured on commit `{commit}` by `scripts/bench-large-items` ({config} build, root, page cache "
       f"dropped before each read). Item: a file in `Notes/` of the mount; plain: a file outside the item "
       f"folders of the same mount; native: the library's own disk.\n"]

out.append("## Reading a whole file (128 KiB reads, cold cache)\n")
out.append("| size | item s | item MB/s | plain s | native s | daemon peak RSS MiB |")
out.append("|---:|---:|---:|---:|---:|---:|")
os.makedirs(os.path.join(mount, "plain"), exist_ok=True)
for size in SIZES:
    data = text(size * MiB, size)
    item, plain, nat = (os.path.join(mount, f"Notes/Read {size}.md"), os.path.join(mount, f"plain/read-{size}.md"),
                        os.path.join(native, f"read-{size}.md"))
    for path in (item, plain, nat):
        with open(path, "wb") as f:
            f.write(data)
    commit_saves()
    assert os.path.getsize(item) == len(data), "the item holds every byte"
    times = []
    for path in (item, plain, nat):
        drop_caches()
        times.append(read_all(path))
    out.append(f"| {size} MiB | {times[0]:.3f} | {size / times[0]:.0f} | {times[1]:.3f} | {times[2]:.3f} | {peak_mib()} |")

out.append(f"\n## fsx-style reopen mode ({REOPEN_STEPS} reads, writes and truncations in a 256 KiB file, a close "
           f"and reopen about every eighth; each close of an item commits it)\n")
out.append("Walk: the operations; done: until the last commit is in the store (a `shelf status`, which waits "
           "for the saves of closed files; the same call follows the plain and native walks).\n")
out.append("| seed | item walk s | item done s | plain done s | native done s | item / plain |")
out.append("|---:|---:|---:|---:|---:|---:|")
ratios = []
for seed in (1, 2, 3):
    item = reopen_walk(os.path.join(mount, f"Notes/Walk {seed}.md"), seed)
    plain = reopen_walk(os.path.join(mount, f"plain/walk-{seed}.md"), seed)
    nat = reopen_walk(os.path.join(native, f"walk-{seed}.md"), seed)
    ratios.append(item[1] / plain[1])
    out.append(f"| {seed} | {item[0]:.3f} | {item[1]:.3f} | {plain[1]:.3f} | {nat[1]:.3f} | {item[1] / plain[1]:.1f}x |")
out.append(f"\nWorst item / plain ratio: {max(ratios):.1f}x (goal: within 5x).\n")

out.append("## History of an 8 MiB item\n")
before = library_bytes()
path = os.path.join(mount, "Notes/History.md")
body = bytearray(text(8 * MiB - 1024, 7))
with open(path, "wb") as f:
    f.write(body)
commit_saves()
after_first = library_bytes()
rng = random.Random(7)
start = time.monotonic()
for edit in range(32):
    at = rng.randrange(20, len(body) - 100)
    body[at:at + 100] = b"x" * 100
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(body[at:at + 100])
    commit_saves()
elapsed = time.monotonic() - start
grown = library_bytes() - after_first
out.append(f"32 saves, each changing 100 bytes in place and committed: {elapsed:.1f} s "
           f"({elapsed / 32 * 1000:.0f} ms a save). The first save added {(after_first - before) / MiB:.1f} MiB to "
           f"the database; the 32 edits (32 kept versions of 8 MiB, {32 * 8} MiB as whole copies) added "
           f"{grown / MiB:.1f} MiB. Daemon peak RSS: {peak_mib()} MiB.\n")

out.append("## A 2 GiB sparse write\n")
path = os.path.join(mount, "Notes/Sparse.md")
start = time.monotonic()
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
os.pwrite(fd, b"!", 2 << 30)
os.close(fd)
commit_saves()
deadline = time.monotonic() + 60
while not os.path.exists(path + ".too-large") and time.monotonic() < deadline:
    time.sleep(0.05)
elapsed = time.monotonic() - start
kept = os.path.getsize(path + ".too-large") if os.path.exists(path + ".too-large") else None
out.append(f"One byte at 2 GiB into a new item file, closed: kept as `Notes/Sparse.md.too-large` "
           f"({kept} bytes) in {elapsed:.2f} s. Daemon peak RSS over the whole run: {peak_mib()} MiB.\n")
print("\n".join(out))
