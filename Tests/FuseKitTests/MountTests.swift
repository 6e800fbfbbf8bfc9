import Foundation
import Synchronization
import FuseKit
import TestSupport
import TestTraits
import Testing
import ShelfSystem

/// Real kernel mounts of ``MemoryFilesystem``, driven by ordinary tools. Serialized: one
/// mount at a time (the harness also enforces this across test targets).
@Suite(.serialized, .scratchFolders)
struct MountTests {
    /// Runs `script` in the mount and expects it to succeed, returning its stdout.
    private func sh(_ mount: TestMount, _ script: String) throws -> String {
        let result = try mount.shell(script)
        #expect(result.succeeded, "`\(script)`: \(result)")
        return result.stdout
    }

    @Test func listsStatsAndReadsFiles() throws {
        let filesystem = MemoryFilesystem()
        filesystem.putFile("hello.txt", "Hello, world\n")
        try TestMount.withMount(filesystem) { mount throws in
            #expect(try sh(mount, "ls -a") == ".\n..\nhello.txt\n")
            #expect(try sh(mount, "stat -c '%s %F %a' hello.txt") == "13 regular file 644\n")
            #expect(try sh(mount, "cat hello.txt") == "Hello, world\n")
            #expect(try mount.shell("cat missing.txt").stderr.contains("No such file or directory"))
        }
    }

    @Test func createsWritesTruncatesAndAppends() throws {
        try TestMount.withMount(MemoryFilesystem()) { mount throws in
            _ = try sh(mount, "printf 'first line\\n' > new.txt && printf 'second\\n' >> new.txt")
            #expect(try sh(mount, "cat new.txt") == "first line\nsecond\n")
            _ = try sh(mount, "printf 'short\\n' > new.txt")  // O_TRUNC on an existing file
            #expect(try sh(mount, "cat new.txt") == "short\n")
            _ = try sh(mount, "truncate -s 2 new.txt")
            #expect(try sh(mount, "stat -c %s new.txt") == "2\n")
            let python = """
            import os
            fd = os.open('data.bin', os.O_CREAT | os.O_RDWR, 0o600)
            os.pwrite(fd, b'world', 6)
            os.pwrite(fd, b'hello ', 0)
            os.close(fd)
            print(open('data.bin', 'rb').read().decode(), oct(os.stat('data.bin').st_mode & 0o777))
            """
            #expect(try mount.run("python3", ["-c", python]).stdout == "hello world 0o600\n")
        }
    }

    @Test func renamesIncludingOverExistingFiles() throws {
        try TestMount.withMount(MemoryFilesystem()) { mount throws in
            _ = try sh(mount, "echo a > a.txt && echo b > b.txt && mv a.txt moved.txt")
            #expect(try sh(mount, "ls") == "b.txt\nmoved.txt\n")
            _ = try sh(mount, "mv moved.txt b.txt")
            #expect(try sh(mount, "ls; cat b.txt") == "b.txt\na\n")
            let renameat2 = """
            import ctypes, os, sys
            libc = ctypes.CDLL(None, use_errno=True)
            AT_FDCWD = -100
            def renameat2(old, new, flags):
                if libc.renameat2(AT_FDCWD, old.encode(), AT_FDCWD, new.encode(), flags) != 0:
                    return os.strerror(ctypes.get_errno())
                return 'ok'
            open('x', 'w').write('x'); open('y', 'w').write('y')
            print(renameat2('x', 'y', 1))   # RENAME_NOREPLACE
            print(renameat2('x', 'y', 2))   # RENAME_EXCHANGE
            print(open('x').read(), open('y').read())
            """
            #expect(try mount.run("python3", ["-c", renameat2]).stdout == "File exists\nok\ny x\n")
        }
    }

    @Test func makesAndRemovesDirectoriesAndFiles() throws {
        try TestMount.withMount(MemoryFilesystem()) { mount throws in
            _ = try sh(mount, "mkdir -p shelf/inner && echo t > shelf/inner/t.txt")
            #expect(try sh(mount, "stat -c '%F' shelf/inner") == "directory\n")
            let refused = try mount.shell("rmdir shelf/inner")
            #expect(!refused.succeeded && refused.stderr.contains("Directory not empty"))
            _ = try sh(mount, "rm shelf/inner/t.txt && rmdir shelf/inner && rmdir shelf")
            #expect(try sh(mount, "ls -A") == "")
            _ = try sh(mount, "ln -s target.txt link && echo hi > target.txt")
            #expect(try sh(mount, "readlink link; cat link") == "target.txt\nhi\n")
        }
    }

    @Test func listsLargeDirectoriesAcrossSeveralBatches() throws {
        let filesystem = MemoryFilesystem()
        let names = (0..<300).map { String(format: "file-with-a-rather-long-name-%04d.md", $0) }
        for name in names { filesystem.putFile(name, name) }
        try TestMount.withMount(filesystem) { mount throws in
            #expect(try sh(mount, "ls -1") == names.joined(separator: "\n") + "\n")
        }
    }

    @Test func storesExtendedAttributes() throws {
        try TestMount.withMount(MemoryFilesystem()) { mount throws in
            _ = try sh(mount, "touch f && setfattr -n user.shelf.state -v downloaded f && setfattr -n user.other -v 1 f")
            #expect(try sh(mount, "getfattr --only-values -n user.shelf.state f") == "downloaded")
            #expect(try sh(mount, "getfattr -d --absolute-names f | grep user. | sort") == "user.other=\"1\"\nuser.shelf.state=\"downloaded\"\n")
            _ = try sh(mount, "setfattr -x user.other f")
            let missing = try mount.shell("getfattr -n user.other f")
            #expect(!missing.succeeded && missing.stderr.contains("No such attribute"))
        }
    }

    @Test func reportsFilesystemStatistics() throws {
        try TestMount.withMount(MemoryFilesystem()) { mount throws in
            #expect(try sh(mount, "stat -f -c '%S %b %f %a %c %d' .") == "4096 1000 600 500 100 90\n")
            #expect(try sh(mount, "df --output=source . | tail -1") == "fusekit-test\n")
        }
    }

    /// No lock operations are implemented, so the kernel arbitrates `flock` and `fcntl` locks
    /// itself: a second process must be refused while the first holds the lock.
    @Test func kernelLocksExcludeAcrossProcesses() throws {
        try TestMount.withMount(MemoryFilesystem()) { mount throws in
            let marker = FileManager.default.temporaryDirectory.appendingPathComponent("locked-\(UUID())").path
            defer { unlink(marker) }
            _ = try sh(mount, "touch shared.md")
            let flockScript = """
            flock shared.md -c 'touch \(marker); sleep 2' &
            while [ ! -e \(marker) ]; do sleep 0.05; done
            if flock -n shared.md true; then echo acquired; else echo refused; fi
            wait
            flock -n shared.md true && echo free
            """
            #expect(try sh(mount, flockScript) == "refused\nfree\n")
            unlink(marker)
            let fcntlScript = """
            import fcntl, os, subprocess, sys
            holder = open('shared.md', 'r+')
            fcntl.lockf(holder, fcntl.LOCK_EX)
            probe = "import fcntl\\ntry:\\n fcntl.lockf(open('shared.md','r+'), fcntl.LOCK_EX | fcntl.LOCK_NB); print('acquired')\\nexcept OSError: print('refused')"
            print(subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True).stdout, end='')
            fcntl.lockf(holder, fcntl.LOCK_UN)
            print(subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True).stdout, end='')
            """
            #expect(try mount.run("python3", ["-c", fcntlScript]).stdout == "refused\nacquired\n")
        }
    }

    @Test func notifierMakesOutsideChangesVisible() throws {
        let filesystem = MemoryFilesystem()
        let inode = filesystem.putFile("note.md", "old text\n")
        try TestMount.withMount(filesystem) { mount throws in
            #expect(try sh(mount, "cat note.md") == "old text\n")
            filesystem.putFile("note.md", "new, longer text\n")
            // Attributes and names are cached for a minute: without a notification the kernel
            // keeps reporting what it has.
            #expect(try sh(mount, "stat -c %s note.md") == "9\n")
            mount.notifier.invalidateContent(of: inode)
            #expect(mount.notifier.waitUntilIdle())
            #expect(try sh(mount, "stat -c %s note.md; cat note.md") == "17\nnew, longer text\n")

            #expect(!(try mount.shell("stat later.md").succeeded))  // cached as a negative entry
            filesystem.putFile("later.md", "arrived\n")
            #expect(!(try mount.shell("stat later.md").succeeded))
            mount.notifier.invalidateEntry(parent: .root, name: "later.md")
            #expect(mount.notifier.waitUntilIdle())
            #expect(try sh(mount, "cat later.md") == "arrived\n")
        }
    }

    /// FuseKit's "Stateless files": after one `open` and one `flush` answered `ENOSYS`, opens and
    /// closes no longer reach the filesystem, `O_TRUNC` and appends still do the right thing,
    /// and the close watcher reports the closes of written files (and only those).
    @Test func statelessFilesReportWriterClosesThroughTheWatcher() throws {
        let filesystem = MemoryFilesystem(stateless: true)
        filesystem.putFile("note.md", "old text\n")
        let events = Mutex<[CloseWatcher.Event]>([])
        try TestMount.withMount(filesystem) { mount throws in
            mount.closeWatcher.onEvent { event in events.withLock { $0.append(event) } }
            mount.closeWatcher.watch(folder: "")
            _ = try sh(mount, "mkdir sub && cat note.md > /dev/null")
            mount.closeWatcher.watch(folder: "sub")
            let before = filesystem.openAndFlushRequests
            _ = try sh(mount, "cat note.md note.md > /dev/null; printf 'new\n' > note.md; printf 'more\n' >> note.md; printf x > sub/a.txt")
            #expect(try sh(mount, "cat note.md") == "new\nmore\n")
            #expect(filesystem.openAndFlushRequests == before, "opens and closes reached the filesystem")
            let sub = try #require(filesystem.inode(at: "sub"))
            // The kernel merges an inotify event into an identical one not read yet, so the two
            // closes of note.md in a row may arrive as one.
            let expected: [CloseWatcher.Event] = [
                .watching(folder: .root), .watching(folder: sub),
                .closed(parent: .root, name: "note.md"),
                .closed(parent: sub, name: "a.txt"),
            ]
            let distinct = { events.withLock { $0 }.reduce(into: [CloseWatcher.Event]()) { if $0.last != $1 { $0.append($1) } } }
            #expect(eventually { distinct() == expected }, "\(events.withLock { $0 })")
        }
    }

    /// Ready means the mount no longer looks itself up (adding a watch does), so nothing of its
    /// own can make an unmount right after busy. A raw session: the watch is queued before run.
    @Test func readyComesOnceTheFoldersQueuedBeforeRunAreWatched() throws {
        let directory = try scratchDirectory()
        defer { rmdir(directory) }
        let session = try FuseSession(filesystem: MemoryFilesystem(),
                                      options: MountOptions(filesystemName: "fusekit-test", subtype: "test"))
        try session.mount(at: directory)
        let events = Mutex<[CloseWatcher.Event]>([])
        session.closeWatcher.onEvent { event in events.withLock { $0.append(event) } }
        session.closeWatcher.watch(folder: "")
        let atReady = Mutex<[CloseWatcher.Event]?>(nil)
        let ready = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        Thread {
            _ = try? session.run(handlingSignals: false) {
                atReady.withLock { $0 = events.withLock { $0 } }
                ready.signal()
            }
            ended.signal()
        }.start()
        defer {
            if ended.wait(timeout: .now() + 10) != .success {
                _ = try? CommandRunner.run("fusermount3", ["-u", "-z", directory], in: "/", timeout: .seconds(10))
                _ = ended.wait(timeout: .now() + 10)
            }
        }
        let wasReady = ready.wait(timeout: .now() + 10) == .success
        let unmount = try CommandRunner.run("fusermount3", ["-u", directory], in: "/", timeout: .seconds(10))
        #expect(wasReady)
        #expect(atReady.withLock { $0 } == [.watching(folder: .root)])
        #expect(unmount.succeeded, "\(unmount)")
    }

    @Test func externalUnmountEndsRunCleanly() throws {
        let filesystem = MemoryFilesystem()
        try TestMount.withMount(filesystem) { mount throws in
            _ = try sh(mount, "echo x > x")
            let outcome = try mount.unmountExternally()
            #expect(throws: Never.self) { try outcome.get() }
            #expect(MountTable.mount(at: mount.mountpoint) == nil)
            #expect(filesystem.destroyed)
        }
    }

    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func signalEndsRunCleanly(signal: Int32) throws {
        let filesystem = MemoryFilesystem()
        try TestMount.withMount(filesystem, handlingSignals: true) { mount throws in
            mount.signalServingThread(signal)
            let outcome = try mount.waitForRun()
            #expect(throws: Never.self) { try outcome.get() }
            #expect(MountTable.mount(at: mount.mountpoint) == nil)
            #expect(filesystem.destroyed)
        }
    }

    @Test func harnessFailsHungOperationsInsteadOfHanging() throws {
        let filesystem = HangingFilesystem()
        try TestMount.withMount(filesystem) { mount throws in
            let started = ContinuousClock.now
            #expect(throws: TestMountError.self) {
                _ = try mount.perform(timeout: .seconds(1)) {
                    try String(contentsOfFile: mount.path("stuck"), encoding: .utf8)
                }
            }
            filesystem.release.signal()
            #expect(ContinuousClock.now - started < .seconds(5))
        }
    }
}

/// Answers `lookup` only once ``release`` is signalled.
private final class HangingFilesystem: FuseOperations, @unchecked Sendable {
    let release = DispatchSemaphore(value: 0)

    func lookup(_ request: Request, parent: Inode, name: String, reply: EntryReply) {
        release.wait()
        release.signal()
        reply.fail(Errno.noEntry)
    }

    func getattr(_ request: Request, inode: Inode, handle: UInt64?, reply: AttributesReply) {
        let now = FileTime.now
        reply.succeed(CachedAttributes(FileAttributes(inode: inode, kind: .directory, permissions: 0o755,
                                                      accessTime: now, modificationTime: now, changeTime: now),
                                       timeout: .seconds(1)))
    }
}

/// Mounting refuses bad mountpoints with a one-line error that names the fix.
@Suite(.serialized, .scratchFolders)
struct MountpointErrorTests {
    private func mountError(at path: String, devicePath: String = "/dev/fuse") -> FuseSessionError? {
        do {
            let session = try FuseSession(filesystem: MemoryFilesystem(), options: MountOptions(filesystemName: "fusekit-test"),
                                          devicePath: devicePath)
            try session.mount(at: path)
            return nil
        } catch {
            return error
        }
    }


    @Test func missingMountpoint() throws {
        let directory = try scratchDirectory()
        defer { rmdir(directory) }
        let path = directory + "/absent"
        let error = mountError(at: path)
        #expect(error == .mountpointMissing(path))
        #expect(error?.description.contains("mkdir -p \(path)") == true)
    }

    @Test func mountpointThatIsAFile() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        #expect(mountError(at: file) == .mountpointNotDirectory(file))
    }

    @Test func mountpointWithFiles() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory + "/keep.txt"))
        #expect(mountError(at: directory) == .mountpointNotEmpty(directory))
        #expect(FileManager.default.fileExists(atPath: directory + "/keep.txt"))
    }

    @Test func mountpointAlreadyMounted() throws {
        try TestMount.withMount(MemoryFilesystem()) { mount throws in
            let error = mountError(at: mount.mountpoint)
            #expect(error == .alreadyMounted(mount.mountpoint))
            #expect(error?.description.contains("fusermount3 -u \(mount.mountpoint)") == true)
        }
    }

    @Test func missingFuseDevice() throws {
        let directory = try scratchDirectory()
        defer { rmdir(directory) }
        let error = mountError(at: directory, devicePath: directory + "/no-such-device")
        #expect(error == .fuseDeviceMissing)
        #expect(MountTable.mount(at: directory) == nil)
    }

    @Test func everyErrorIsOneLine() {
        let errors: [FuseSessionError] = [
            .mountpointMissing("/m"), .mountpointNotDirectory("/m"), .mountpointNotEmpty("/m"), .alreadyMounted("/m"),
            .staleMount("/m"), .fuseDeviceMissing, .invalidOptions("x"), .mountFailed("/m"), .sessionAlreadyUsed,
            .loopFailed(.ioError),
        ]
        for error in errors { #expect(!error.description.contains("\n"), "\(error)") }
    }
}

/// A new empty folder to mount on (or fail to).
private func scratchDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("fusekit-\(UUID())").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    return path
}
