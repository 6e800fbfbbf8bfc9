import Foundation
import Testing
import TestSupport
import TestTraits

/// No input takes the mount down: an item file written far past what an item may hold costs
/// the daemon no memory (its bytes stay on disk, in the journal, then beside the item as a
/// plain `<name>.too-large` file), and a journal entry that cannot be replayed is set aside and
/// reported while the mount comes up. The daemon runs under a 1 GiB memory limit throughout.
@Suite(.serialized, .scratchFolders) struct LargeItemTests {
    static let limit = 1 << 30
    static let twoGiB = 2 << 30
    /// What the README promises the daemon stays within, whatever is written.
    static let budget = 384 << 20

    /// `truncate -s 2G` of a new item file and one byte written at 2 GiB into an existing one,
    /// under the limit: the mount keeps working, both files' bytes are kept exactly as plain
    /// files beside them, the items keep their last good saves, and the library remounts. A
    /// 2 GiB plain file renamed onto an item name is refused with `EFBIG`.
    @Test func twoGiBSparseWritesUnderAMemoryLimitLeaveAWorkingMount() throws {
        try ShelfCLI.withSampleLibrary { cli, mountpoint in
            let limit = try MemoryLimit(bytes: Self.limit)
            defer { limit.remove() }
            let note = "Notes/Stoic themes.md"
            let before = Data(try cli.run("show", note).stdout.utf8)
            try Self.mount(cli, mountpoint, under: limit)

            let script = """
                import errno, os, signal, sys
                signal.alarm(60)
                root, note = sys.argv[1], sys.argv[2]
                fd = os.open(os.path.join(root, note), os.O_WRONLY)
                os.pwrite(fd, b"!", \(Self.twoGiB))
                os.close(fd)
                fd = os.open(os.path.join(root, "Notes/Huge.md"), os.O_WRONLY | os.O_CREAT, 0o644)
                os.ftruncate(fd, \(Self.twoGiB))
                os.close(fd)
                # A large plain file renamed onto an item name: refused, and left as it was.
                temp = os.path.join(root, "Notes/.dump.tmp")
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT, 0o644)
                os.ftruncate(fd, \(Self.twoGiB))
                os.close(fd)
                try:
                    os.rename(temp, os.path.join(root, "Notes/Dump.md"))
                    sys.exit("a 2 GiB file was renamed onto an item name")
                except OSError as error:
                    assert error.errno == errno.EFBIG, error
                assert os.stat(temp).st_size == \(Self.twoGiB)
                assert not os.path.exists(os.path.join(root, "Notes/Dump.md"))
                os.unlink(temp)
                """
            let written = try cli.tool("python3", "-c", script, mountpoint, note, timeout: .seconds(90))
            try #require(written.status == 0, "\(written.stderr)")
            let keptNote = mountpoint + "/" + note + ".too-large"
            let keptNew = mountpoint + "/Notes/Huge.md.too-large"
            let kept = try Self.inMount(mountpoint, timeout: .seconds(40)) {
                eventually(within: .seconds(30)) {
                    FileManager.default.fileExists(atPath: keptNote) && FileManager.default.fileExists(atPath: keptNew)
                }
            }
            let listing = try Self.inMount(mountpoint) { try Self.listing(mountpoint + "/Notes") }
            try #require(kept, "the too-large bytes were kept beside their items: \(listing)")

            try Self.expectWorking(cli, mountpoint, note: note, before: before, keptNote: keptNote, keptNew: keptNew)
            let status = try cli.run("status").stdout
            #expect(status.contains("Too large: 2 files"), "\(status)")
            #expect(status.contains("  \(note).too-large (\(Self.twoGiB + 1) bytes)"), "\(status)")
            #expect(try cli.run("unmount", mountpoint, timeout: .seconds(30)).status == 0)
            try Self.mount(cli, mountpoint, under: limit)
            try Self.expectWorking(cli, mountpoint, note: note, before: before, keptNote: keptNote, keptNew: keptNew)
            #expect(try cli.run("unmount", mountpoint, timeout: .seconds(30)).status == 0)
            #expect(try limit.outOfMemoryKills() == 0)
            let peak = try limit.peak()
            #expect(peak < Self.budget, "the daemon's cgroup peaked at \(peak >> 20) MiB")
        }
    }

    /// Journal entries of a mount that died: one saves into its new item, one whose item is
    /// gone is set aside with its bytes and reported (and stays so, never replayed again), and
    /// one of 2 GiB is kept beside its item as a plain file — the mount comes up every time.
    @Test func aJournalEntryThatCannotReplayIsSetAsideAndTheMountComesUp() throws {
        try ShelfCLI.withSampleLibrary { cli, mountpoint in
            let limit = try MemoryLimit(bytes: Self.limit)
            defer { limit.remove() }
            let journal = cli.library.appendingPathComponent("journal").path
            try FileManager.default.createDirectory(atPath: journal, withIntermediateDirectories: true)
            let ended = try cli.tool("/bin/sh", "-c", "echo $$")
            let pid = try #require(Int32(ended.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            func hex(_ path: String) -> String { path.utf8.map { String(format: "%02x", $0) }.joined() }
            let targets = "7 new \(hex("Notes/Replayed.md"))\n8 item no-such-item -\n9 new \(hex("Notes/Restored dump.md"))\n"
            try Data(targets.utf8).write(to: URL(fileURLWithPath: "\(journal)/\(pid).targets"))
            let replayed = Data("---\ntitle: Replayed\n---\nSaved from the journal.\n".utf8)
            try replayed.write(to: URL(fileURLWithPath: "\(journal)/\(pid)-7.bytes"))
            let orphan = Data("Bytes for an item nobody knows.\n\u{0}\u{1}".utf8)
            try orphan.write(to: URL(fileURLWithPath: "\(journal)/\(pid)-8.bytes"))
            // A sparse 2 GiB entry, as `truncate -s 2G` leaves it.
            try Data().write(to: URL(fileURLWithPath: "\(journal)/\(pid)-9.bytes"))
            try #require(truncate("\(journal)/\(pid)-9.bytes", off_t(Self.twoGiB)) == 0)

            for round in 1...2 {
                try Self.mount(cli, mountpoint, under: limit)
                let shown = try Self.inMount(mountpoint) { FileManager.default.contents(atPath: mountpoint + "/Notes/Replayed.md") }
                #expect(shown == replayed, "round \(round)")
                let dump = try Self.inMount(mountpoint) {
                    try FileManager.default.attributesOfItem(atPath: mountpoint + "/Notes/Restored dump.md.too-large")[.size] as? Int
                }
                #expect(dump == Self.twoGiB, "round \(round)")
                let status = try cli.run("status")
                #expect(status.stdout.contains("Set aside: 1 journal entry"), "round \(round): \(status.stdout)")
                #expect(status.stdout.contains("item no-such-item"), "round \(round): \(status.stdout)")
                let setAside = "\(journal)/set-aside/\(pid)-8.bytes"
                #expect(status.stdout.contains(setAside), "round \(round): \(status.stdout)")
                #expect(FileManager.default.contents(atPath: setAside) == orphan, "round \(round): the bytes are kept as written")
                #expect(!status.stdout.contains("Unsaved:"), "round \(round): \(status.stdout)")
                #expect(try cli.run("unmount", mountpoint, timeout: .seconds(30)).status == 0)
            }
            #expect(try limit.outOfMemoryKills() == 0)
        }
    }

    /// Mounts with `shelf mount` started inside `limit`'s cgroup, and checks the daemon runs there.
    static func mount(_ cli: ShelfCLI, _ mountpoint: String, under limit: MemoryLimit) throws {
        let mounted = try cli.tool("/bin/sh", ["-c", MemoryLimit.enterScript, limit.processesFile,
                                               ShelfCLI.executable.path, "mount", mountpoint], timeout: .seconds(60))
        try #require(mounted.status == 0, "\(mounted.stderr)")
        let daemon = try #require(try CrashRecoveryTests.daemonPID(library: cli.library.path))
        try #require(limit.contains(daemon), "the daemon \(daemon) runs outside the memory limit's cgroup \(limit.folder)")
    }

    /// The mount answers, the items show their last good saves, and the too-large bytes are
    /// there to the last byte.
    static func expectWorking(_ cli: ShelfCLI, _ mountpoint: String, note: String, before: Data, keptNote: String,
                              keptNew: String) throws {
        let shown = try inMount(mountpoint) { FileManager.default.contents(atPath: mountpoint + "/" + note) }
        #expect(shown == before, "the note keeps its last good save")
        let new = try inMount(mountpoint) { FileManager.default.contents(atPath: mountpoint + "/Notes/Huge.md") }
        #expect(new == Data(), "the new item is empty")
        let ends = try cli.tool("python3", "-c", """
            import os, sys
            for path, size, last in ((sys.argv[1], \(twoGiB + 1), b"!"), (sys.argv[2], \(twoGiB), b"\\0")):
                assert os.stat(path).st_size == size, (path, os.stat(path).st_size)
                fd = os.open(path, os.O_RDONLY)
                assert os.pread(fd, 8, size - 1) == last, path
                os.close(fd)
            """, keptNote, keptNew, timeout: .seconds(30))
        #expect(ends.status == 0, "\(ends.stderr)")
        let edit = Data("---\ntitle: Still editable\n---\nThe mount works.\n".utf8)
        let reread = try inMount(mountpoint) {
            try edit.write(to: URL(fileURLWithPath: mountpoint + "/Notes/Still editable.md"))
            return FileManager.default.contents(atPath: mountpoint + "/Notes/Still editable.md")
        }
        #expect(reread == edit)
        #expect(try cli.run("show", "Notes/Still editable.md").stdout == String(decoding: edit, as: UTF8.self))
        let daemon = try #require(try CrashRecoveryTests.daemonPID(library: cli.library.path))
        let status = try String(contentsOfFile: "/proc/\(daemon)/status", encoding: .utf8)
        let peak = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }?.split(separator: " ").dropFirst().first
            .flatMap { Int($0) }, "no VmHWM in /proc/\(daemon)/status")
        #expect(peak << 10 < budget, "the daemon's peak resident memory is \(peak >> 10) MiB")
    }

    /// Runs file operations on the mount with a deadline: a hang fails the test.
    static func inMount<T: Sendable>(_ mountpoint: String, timeout: Duration = .seconds(20),
                                     _ body: @escaping @Sendable () throws -> T) throws -> T {
        try TestMount.perform(on: mountpoint, timeout: timeout, body)
    }

    static func listing(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }
}
