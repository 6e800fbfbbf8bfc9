#!/usr/bin/env python3
"""A random walk of ordinary file operations on item files, checked against a shadow copy.

Modelled on xfstests' fsx: every operation is applied to a file in the mount and to its twin in
a plain folder (the shadow), and after every step the two must read back the same bytes with the
same size. Operations: pwrite at any offset (holes included), ftruncate up and down, O_APPEND
writes, O_TRUNC rewrites, a temp file renamed over the file, several writes and reads on one
descriptor, two descriptors on one file, fsync, new files, and chmod + utime (mode bits are
compared after every step, the set modification time right after it is set). Written bytes mix text, split
multibyte characters, bytes that are not UTF-8, NULs, CRLF, a BOM and frontmatter-like lines.

  fsx.py --mount M --shadow S --seed N --steps N FILE...   walk (FILE: paths relative to M;
                                                           the shadow starts as copies of them)
  fsx.py --mount M --shadow S --verify                     compare every shadow file with M

  --mmap      also read and write through shared memory maps (msync, munmap), as fsx -W/-R off
  --reopen N  pwrite and truncate through one descriptor kept open across steps, closed and
              reopened about once in N steps (fsx -c N): reads through new opens see writes that
              no close has ended yet
  --only OPS  only these operations (comma-separated: pwrite,append,…; new files still come),
              to find which one a divergence needs

Exit status 0 when everything matched; 1 with the first divergence, the seed and the step on
stderr. Each operation has a deadline (SIGALRM): a hung mount fails the walk instead of hanging.
"""
import argparse
import collections
import mmap
import os
import random
import shutil
import signal
import sys
import time

DEADLINE_SECONDS = 10
TEXTS = ["Read slowly.\n", "---\ntitle: Walk\n---\n", "# Heading\n\n## Passages\n", "> quoted ^p-1a2b\n",
         "é", "日本語", "🙂", "\r\n", "\ufeff", "tags:\n  - a\n"]


class Divergence(Exception):
    pass


def on_alarm(signum, frame):
    raise TimeoutError(f"an operation took longer than {DEADLINE_SECONDS} s")


def payload(rng):
    """Some bytes of one of several kinds; multibyte text may be cut inside a character."""
    kind = rng.randrange(6)
    if kind == 0:
        return "".join(rng.choice(TEXTS) for _ in range(rng.randrange(1, 6))).encode()
    if kind == 1:
        text = "".join(rng.choice(TEXTS[4:7]) for _ in range(rng.randrange(1, 8))).encode()
        return text[rng.randrange(len(text)):] if rng.random() < 0.5 else text[:rng.randrange(1, len(text) + 1)]
    if kind == 2:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    if kind == 3:
        return b"\0" * rng.randrange(1, 32)
    if kind == 4:
        return bytes([rng.choice([0x80, 0xbf, 0xc3, 0xe6, 0xf0, 0xff])])
    return bytes(rng.randrange(32, 127) for _ in range(rng.randrange(1, 4096)))


class Walk:
    def __init__(self, mount, shadow, seed, files):
        self.mount, self.shadow, self.seed = mount, shadow, seed
        self.rng = random.Random(seed)
        self.files = list(files)
        self.created = 0
        self.trace = False
        self.reopen = 0
        self.held = {}  # relative path -> (mount fd, shadow fd), with --reopen

    def close_held(self):
        for fds in self.held.values():
            for fd in fds:
                os.close(fd)
        self.held = {}

    def held_descriptors(self, relative):
        """The descriptors kept open on `relative`, reopened about once in `reopen` steps."""
        if relative in self.held and self.rng.randrange(self.reopen) == 0:
            for fd in self.held.pop(relative):
                os.close(fd)
        if relative not in self.held:
            self.held[relative] = tuple(os.open(path, os.O_RDWR) for path in self.both(relative))
        return self.held[relative]

    def held_write(self, relative):
        offset = self.rng.randrange(self.size(relative) + 64)
        data = payload(self.rng)
        for fd in self.held_descriptors(relative):
            os.pwrite(fd, data, offset)

    def held_truncate(self, relative):
        size = self.rng.randrange(self.size(relative) * 2 + 16)
        for fd in self.held_descriptors(relative):
            os.ftruncate(fd, size)

    def mapped_read(self, relative):
        """A read through a shared map of the file sees what read() sees."""
        size = self.size(relative)
        if size == 0:
            return
        got = []
        for path in self.both(relative):
            with open(path, "rb") as file, mmap.mmap(file.fileno(), size, mmap.MAP_SHARED, mmap.PROT_READ) as mapped:
                got.append(mapped[:])
        if got[0] != got[1]:
            raise Divergence(f"mapped read: mount {got[0][:80]!r} shadow {got[1][:80]!r}")

    def mapped_write(self, relative):
        """Bytes stored through a shared map inside the file, then msync and munmap."""
        size = self.size(relative)
        if size == 0:
            return
        data = payload(self.rng)[:size]
        offset = self.rng.randrange(size - len(data) + 1)
        for path in self.both(relative):
            with open(path, "r+b") as file, mmap.mmap(file.fileno(), size, mmap.MAP_SHARED) as mapped:
                mapped[offset:offset + len(data)] = data
                mapped.flush()

    def both(self, relative):
        return os.path.join(self.mount, relative), os.path.join(self.shadow, relative)

    def size(self, relative):
        return os.path.getsize(self.both(relative)[1])

    # Each operation does the same thing to the mount's file and to the shadow's.

    def pwrite(self, relative):
        offset = self.rng.randrange(self.size(relative) + 64)
        data = payload(self.rng)
        for path in self.both(relative):
            fd = os.open(path, os.O_WRONLY)
            try:
                os.pwrite(fd, data, offset)
            finally:
                os.close(fd)

    def truncate(self, relative):
        size = self.rng.randrange(self.size(relative) * 2 + 16)
        for path in self.both(relative):
            fd = os.open(path, os.O_WRONLY)
            try:
                os.ftruncate(fd, size)
            finally:
                os.close(fd)

    def append(self, relative):
        data = payload(self.rng)
        for path in self.both(relative):
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)

    def rewrite(self, relative):
        data = b"".join(payload(self.rng) for _ in range(self.rng.randrange(1, 4)))
        for path in self.both(relative):
            with open(path, "wb") as file:
                file.write(data)

    def replace(self, relative):
        data = b"".join(payload(self.rng) for _ in range(self.rng.randrange(1, 4)))
        # A descriptor held on the replaced file would write a file that has no name any more
        # (an item's replaced file saves into the item instead): reopen after the rename.
        for fd in self.held.pop(relative, ()):
            os.close(fd)
        for path in self.both(relative):
            folder, name = os.path.split(path)
            temporary = os.path.join(folder, f".{name}.fsx-tmp")
            with open(temporary, "wb") as file:
                file.write(data)
                if self.rng.random() < 0.3:
                    file.flush()
                    os.fsync(file.fileno())
            os.rename(temporary, path)

    def session(self, relative):
        """Several writes and reads on one descriptor, reads checked as they go, maybe fsync."""
        script = [(self.rng.randrange(3), payload(self.rng), self.rng.random()) for _ in range(self.rng.randrange(2, 6))]
        sync = self.rng.random() < 0.4
        mount_path, shadow_path = self.both(relative)
        fds = [os.open(mount_path, os.O_RDWR), os.open(shadow_path, os.O_RDWR)]
        try:
            for action, data, where in script:
                size = os.fstat(fds[1]).st_size
                offset = int(where * (size + 8))
                if action == 0:
                    for fd in fds:
                        os.pwrite(fd, data, offset)
                elif action == 1:
                    for fd in fds:
                        os.ftruncate(fd, offset)
                else:
                    got = [os.pread(fd, 4096, offset) for fd in fds]
                    if got[0] != got[1]:
                        raise Divergence(f"read on an open descriptor at {offset}: mount {got[0][:80]!r} shadow {got[1][:80]!r}")
            if sync:
                for fd in fds:
                    os.fsync(fd)
        finally:
            for fd in fds:
                os.close(fd)

    def two_descriptors(self, relative):
        """Writes through one descriptor are seen through another open on the same file."""
        mount_path, shadow_path = self.both(relative)
        data, more = payload(self.rng), payload(self.rng)
        offset = self.rng.randrange(self.size(relative) + 1)
        opened = [(os.open(path, os.O_RDWR), os.open(path, os.O_RDONLY)) for path in (mount_path, shadow_path)]
        try:
            for writer, _ in opened:
                os.pwrite(writer, data, offset)
            got = [os.pread(reader, len(data), offset) for _, reader in opened]
            if got[0] != got[1]:
                raise Divergence(f"second descriptor read {got[0][:80]!r}, shadow {got[1][:80]!r}")
            for writer, _ in opened:
                os.write(writer, more)
        finally:
            for pair in opened:
                for fd in pair:
                    os.close(fd)

    def metadata(self, relative):
        """chmod and a modification time to the microsecond, as rsync -a and cp -p set them."""
        mode = self.rng.choice([0o600, 0o644, 0o640, 0o444, 0o664])
        mtime_ns = self.rng.randrange(10**9, 2 * 10**9) * 10**9 + self.rng.randrange(10**6) * 1000
        for path in self.both(relative):
            os.chmod(path, mode)
            os.utime(path, ns=(mtime_ns, mtime_ns))
        got = os.stat(self.both(relative)[0]).st_mtime_ns
        if abs(got - mtime_ns) >= 1000:
            raise Divergence(f"utime set {mtime_ns} ns, the mount shows {got}")

    def create(self, relative):
        folder = os.path.dirname(relative)
        self.created += 1
        name = os.path.join(folder, f"fsx {self.seed} {self.created}.md")
        data = payload(self.rng)
        for path in self.both(name):
            with open(path, "wb") as file:
                file.write(data)
        self.files.append(name)
        return name

    def run(self, steps, mapped=False, only=None):
        operations = [self.pwrite, self.pwrite, self.truncate, self.append, self.rewrite, self.replace,
                      self.session, self.two_descriptors, self.metadata]
        if mapped:
            operations += [self.mapped_read, self.mapped_write, self.mapped_write]
        if self.reopen:
            operations += [self.held_write, self.held_write, self.held_write, self.held_truncate]
        if only:
            operations = [getattr(self, name) for name in only]
        try:
            self.walk(steps, operations)
        finally:
            self.close_held()

    def walk(self, steps, operations):
        recent = collections.deque(maxlen=12)  # the steps before a divergence, in its report
        for step in range(steps):
            relative = self.rng.choice(self.files)
            operation = self.create if self.rng.random() < 0.02 else self.rng.choice(operations)
            signal.alarm(DEADLINE_SECONDS)
            line = f"step {step}: {operation.__name__} {relative!r} (size {self.size(relative)})"
            recent.append(line)
            if self.trace:
                print(line, file=sys.stderr)
            touched = relative
            try:
                touched = operation(relative) or relative
                compare(self.mount, self.shadow, touched)
            except (Divergence, OSError, TimeoutError) as error:
                signal.alarm(0)
                raise Divergence(f"seed {self.seed}, step {step}, {operation.__name__} on {relative!r}: {error}"
                                 f"\n  a second later: {self.settled(touched)}"
                                 "\n  the steps before:\n    " + "\n    ".join(recent)) from None
            finally:
                signal.alarm(0)

    def settled(self, relative):
        """Whether a divergence lasts: a read that lagged matches a second later, a lost write does not."""
        time.sleep(1)
        try:
            compare(self.mount, self.shadow, relative)
            return "the file matches its shadow (a read that lagged)"
        except (Divergence, OSError) as error:
            return f"still differs ({error})"


def compare(mount, shadow, relative):
    with open(os.path.join(shadow, relative), "rb") as file:
        expected = file.read()
    path = os.path.join(mount, relative)
    with open(path, "rb") as file:
        actual = file.read()
    size = os.stat(path).st_size
    if actual != expected:
        first = next((i for i, (a, b) in enumerate(zip(actual, expected)) if a != b), min(len(actual), len(expected)))
        raise Divergence(f"{relative!r} reads {len(actual)} bytes, shadow {len(expected)}; first difference at {first}: "
                         f"mount {actual[first:first + 40]!r} shadow {expected[first:first + 40]!r}")
    if size != len(expected):
        raise Divergence(f"{relative!r}: st_size {size}, but {len(expected)} bytes read")
    modes = [os.stat(p).st_mode & 0o7777 for p in (path, os.path.join(shadow, relative))]
    if modes[0] != modes[1]:
        raise Divergence(f"{relative!r}: mode {modes[0]:o}, shadow {modes[1]:o}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mount", required=True)
    parser.add_argument("--shadow", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--verify", action="store_true")
    parser.add_argument("--trace", action="store_true", help="print each step on stderr")
    parser.add_argument("--mmap", action="store_true", help="also read and write through shared maps")
    parser.add_argument("--reopen", type=int, default=0, metavar="N",
                        help="write through descriptors held open, reopened about once in N steps")
    parser.add_argument("--only", type=lambda text: text.split(","), metavar="OPS",
                        help="only these operations, comma-separated")
    parser.add_argument("files", nargs="*")
    arguments = parser.parse_args()
    signal.signal(signal.SIGALRM, on_alarm)
    try:
        if arguments.verify:
            for folder, _, names in os.walk(arguments.shadow):
                for name in names:
                    compare(arguments.mount, arguments.shadow,
                            os.path.relpath(os.path.join(folder, name), arguments.shadow))
            return 0
        for relative in arguments.files:
            target = os.path.join(arguments.shadow, relative)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(os.path.join(arguments.mount, relative), target)
        walk = Walk(arguments.mount, arguments.shadow, arguments.seed, arguments.files)
        walk.trace = arguments.trace
        walk.reopen = arguments.reopen
        walk.run(arguments.steps, mapped=arguments.mmap, only=arguments.only)
    except (Divergence, OSError, TimeoutError) as error:
        print(f"fsx: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
