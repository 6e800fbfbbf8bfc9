import Foundation
import Testing
import TestSupport
import TestTraits

/// The end of a mount: SIGTERM and Ctrl-C commit what programs wrote, and a save that cannot be
/// committed (a full disk) stays in the journal, is reported, and is saved by the next mount.
@Suite(.serialized, .scratchFolders) struct ShutdownTests {
    /// Python run with the note's path in the mount, the daemon's pid, a signal number and a
    /// scratch file: it writes without closing, signals the daemon, waits for it to exit, and
    /// writes what the note must hold into the scratch file.
    static let writeThenSignal = """
        import os, sys, time
        path, pid, signal_number, expected = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
        data = b"Written, not closed, when the signal came.\\n" * 50
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        os.write(fd, data)
        os.kill(pid, signal_number)
        \(waitForExit)
        try:
            os.close(fd)
        except OSError:
            pass
        open(expected, "wb").write(data)
        """

    /// Python lines that wait up to 30 s for process `pid` to be gone (or a zombie).
    static let waitForExit = """
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if open(f"/proc/{pid}/stat").read().split(") ")[1].startswith("Z"):
                    break
            except FileNotFoundError:
                break
            time.sleep(0.02)
        else:
            sys.exit("the daemon did not exit within 30 s")
        """

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalCommitsWhatProgramsWrote(_ signal: Int32) throws {
        try ShelfCLI.withSampleLibrary { cli, mountpoint in
            let note = "Notes/Stoic themes.md"
            try #require(try cli.run("mount", mountpoint, timeout: .seconds(40)).status == 0)
            let pid = try #require(try CrashRecoveryTests.daemonPID(library: cli.library.path))
            let expected = cli.scratch.appendingPathComponent("expected").path
            let writer = try cli.tool("python3", "-c", Self.writeThenSignal, mountpoint + "/" + note, String(pid),
                                      String(signal), expected, timeout: .seconds(40))
            #expect(writer.status == 0, "\(writer.stderr)")
            ShelfCLI.forceUnmount(mountpoint)
            let written = try String(contentsOfFile: expected, encoding: .utf8)
            #expect(try cli.run("show", note).stdout == written, "committed before the daemon exited")
            #expect(!(try cli.run("status").stdout.contains("Unsaved:")), "nothing left in the journal")
        }
    }

    /// A library on a small tmpfs: writes that the journal cannot hold fail with ENOSPC, what
    /// was acknowledged survives a shutdown whose save cannot be committed, `shelf status`
    /// reports it, and the next mount saves it once there is room again.
    @Test func aFullDiskFailsWritesAndLosesNothingAcknowledged() throws {
        let cli = try ShelfCLI()
        let disk = cli.scratch.appendingPathComponent("small-disk").path
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let mounted = try CommandRunner.run("mount", ["-t", "tmpfs", "-o", "size=48m", "tmpfs", disk], in: "/",
                                            timeout: .seconds(10))
        try #require(mounted.succeeded, "\(mounted)")
        let mountpoint = cli.scratch.appendingPathComponent("mnt").path
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        LeftoverRecords.mounts.record(mountpoint)
        LeftoverRecords.mounts.record(disk)
        defer {
            ShelfCLI.forceUnmount(mountpoint)
            _ = try? CommandRunner.run("umount", ["-l", disk], in: "/", timeout: .seconds(10))
            LeftoverRecords.mounts.forget(mountpoint)
            LeftoverRecords.mounts.forget(disk)
        }
        let library = disk + "/library"
        try #require(try cli.run("init", library).status == 0)
        try #require(try cli.run("import", ShelfCLI.samples.appendingPathComponent("library").path).status == 0)
        try #require(try cli.run("mount", mountpoint, timeout: .seconds(40)).status == 0)
        let pid = try #require(try CrashRecoveryTests.daemonPID(library: library))

        let note = "Notes/Stoic themes.md"
        let expected = cli.scratch.appendingPathComponent("expected").path
        let script = """
            import errno, os, sys, time
            path, pid, filler, expected = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
            acknowledged = b"".join(b"line %d of a save that meets a full disk\\n" % n for n in range(10000))
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
            os.write(fd, acknowledged)
            filling = os.open(filler, os.O_WRONLY | os.O_CREAT)
            for size in (1 << 20, 4096, 1):
                try:
                    while True:
                        os.write(filling, b"\\0" * size)
                except OSError as error:
                    assert error.errno == errno.ENOSPC, error
            os.close(filling)
            # As on a disk, the first write may fill the last free bytes (a short count); then ENOSPC.
            for attempt in range(3):
                try:
                    acknowledged += b"x" * os.write(fd, b"x" * 65536)
                except OSError as error:
                    assert error.errno == errno.ENOSPC, f"a write on a full disk failed with {error}, not ENOSPC"
                    break
            else:
                sys.exit("writes on a full disk kept being acknowledged")
            os.kill(pid, 15)
            \(Self.waitForExit)
            open(expected, "wb").write(acknowledged)
            """
        let filler = disk + "/filler"
        let writer = try cli.tool("python3", "-c", script, mountpoint + "/" + note, String(pid), filler,
                                  expected, timeout: .seconds(60))
        #expect(writer.status == 0, "\(writer.stderr)")
        ShelfCLI.forceUnmount(mountpoint)
        #expect(try cli.run("status").stdout.contains("Unsaved: 1 file"), "the save the full disk refused is reported")

        try FileManager.default.removeItem(atPath: filler)
        try #require(try cli.run("mount", mountpoint, timeout: .seconds(40)).status == 0)
        let acknowledged = try Data(contentsOf: URL(fileURLWithPath: expected))
        #expect(try Data(contentsOf: URL(fileURLWithPath: mountpoint + "/" + note)) == acknowledged)
        #expect(Data(try cli.run("show", note).stdout.utf8) == acknowledged)
        #expect(!(try cli.run("status").stdout.contains("Unsaved:")))
        let again = try cli.tool("/bin/sh", "-c", "printf 'Room again.\\n' >> \"$0\"", mountpoint + "/" + note,
                                 timeout: .seconds(10))
        #expect(again.status == 0, "saving works once space is freed: \(again.stderr)")
        #expect(Data(try cli.run("show", note).stdout.utf8) == acknowledged + Data("Room again.\n".utf8))

        // A save that fails while the mount runs is tried again once there is room.
        let failing = """
            import errno, os, sys
            path, filler = sys.argv[1], sys.argv[2]
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
            os.write(fd, b"Saved once the disk had room.\\n" * 200000)
            filling = os.open(filler, os.O_WRONLY | os.O_CREAT)
            try:
                while True:
                    os.write(filling, b"\\0" * 4096)
            except OSError as error:
                assert error.errno == errno.ENOSPC, error
            os.close(fd)
            """
        let failed = try cli.tool("python3", "-c", failing, mountpoint + "/" + note, filler, timeout: .seconds(30))
        #expect(failed.status == 0, "\(failed.stderr)")
        let told = try cli.run("show", note)
        #expect(told.stderr.contains("could not commit its pending saves"),
                "a command is told that the save it should see failed: \(told.stderr), \(told.stdout.count) bytes shown")
        try FileManager.default.removeItem(atPath: filler)
        let retried = String(repeating: "Saved once the disk had room.\n", count: 200000)
        var shown = ""
        let deadline = ContinuousClock.now + .seconds(10)
        repeat { shown = try cli.run("show", note).stdout } while shown != retried && ContinuousClock.now < deadline
        #expect(shown == retried, "saved once the disk had room")
        #expect(try cli.run("unmount", mountpoint, timeout: .seconds(20)).status == 0)
    }
}
