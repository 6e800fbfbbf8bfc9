#!/usr/bin/env python3
"""Links a new, empty library to a cloud, mounts it, and waits until the mount lists every item:
the time from the start of `shelf cloud link` until a walk of the mount (what `ls -R` sees:
hidden names left out) finds FILES files whose sizes add up to BYTES (placeholders carry their
true size, so the listing alone must add up).

  bench_sync_link.py SHELF CLOUD LIBRARY MOUNTPOINT DEVICE FILES BYTES

Prints one line: LINK MOUNT LIST TOTAL WALKS FOUND_FILES FOUND_BYTES — seconds for `shelf cloud
link` (including the sync it runs), for `shelf mount` (which returns once the mount answers) plus
one stat of `Books/`, for the walks until the listing was complete, their sum, how many walks
that took, and what the last walk found. Gives up after 120 s of walking."""
import os
import subprocess
import sys
import time


def walk(root):
    files = size = 0
    for folder, names, files_here in os.walk(root):
        names[:] = [name for name in names if not name.startswith(".")]
        for name in files_here:
            if not name.startswith("."):
                files += 1
                size += os.lstat(os.path.join(folder, name)).st_size
    return files, size


def main():
    shelf, cloud, library, mountpoint, device = sys.argv[1:6]
    files, size = int(sys.argv[6]), int(sys.argv[7])
    quiet = {"stdout": subprocess.DEVNULL, "check": True}
    start = time.monotonic()
    subprocess.run([shelf, "cloud", "link", cloud, "--library", library, "--device", device], **quiet)
    linked = time.monotonic()
    subprocess.run([shelf, "mount", mountpoint, "--library", library], **quiet)
    os.stat(os.path.join(mountpoint, "Books"))
    mounted = time.monotonic()
    walks, found = 0, (0, 0)
    while time.monotonic() - mounted < 120:
        walks += 1
        found = walk(mountpoint)
        if found == (files, size):
            break
        time.sleep(0.01)
    listed = time.monotonic()
    print("%.3f %.3f %.3f %.3f %d %d %d" % (linked - start, mounted - linked, listed - mounted, listed - start,
                                             walks, found[0], found[1]))


if __name__ == "__main__":
    main()
