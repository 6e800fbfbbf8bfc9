import Foundation
import Glibc
import ShelfFS
import TestSupport
import TestTraits
import Testing
import ShelfSystem

/// Mounting as the system does it (an fstab line through mount.fuse3, a systemd unit) and
/// recovering a mount whose daemon died (issue #22).
@Suite(.serialized, .scratchFolders) struct MountAtLoginTests {
    /// `mount -t fuse.shelf LIB MNT -o …` runs mount.fuse3, which runs `shelf LIB MNT -o …`.
    @Test func mountThroughMountFuse3WithFstabOptions() throws {
        try ShelfCLI.withSampleLibrary { cli, mountpoint in
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            // mount.fuse3 finds `shelf` on PATH, as it finds the installed /usr/bin/shelf.
            var environment = cli.environment
            environment["PATH"] = ShelfCLI.executable.deletingLastPathComponent().path + ":" + path
            let mounted = try CommandRunner.run("/sbin/mount.fuse3", [cli.library.path, mountpoint, "-t", "fuse.shelf",
                                                "-o", "rw,nosuid,nodev,noauto,x-systemd.automount,_netdev,poll_interval=5"],
                                                in: cli.scratch.path, environment: environment, timeout: .seconds(40))
            #expect(mounted.status == 0, "\(mounted)")
            #expect(FileManager.default.fileExists(atPath: mountpoint + "/Books/Walden - Henry David Thoreau.md"))
            #expect(try cli.run("status").stdout.contains("Mounted: \(mountpoint)"))
            #expect(try cli.run("unmount", mountpoint, timeout: .seconds(20)).status == 0)

            let typo = try cli.run(cli.library.path, mountpoint, "-o", "rw,alow_other")
            #expect(typo.status != 0 && typo.stderr.contains("unknown mount option `alow_other`"), "\(typo)")
            let readOnly = try cli.run(cli.library.path, mountpoint, "-o", "ro")
            #expect(readOnly.status != 0 && readOnly.stderr.contains("remove `ro`"), "\(readOnly)")
        }
    }

    /// A `Type=notify` unit: READY=1 on $NOTIFY_SOCKET once mounted, and log lines for both ends.
    @Test func foregroundMountTellsSystemdAndLogsMountedAndUnmounted() throws {
        try ShelfCLI.withSampleLibrary { cli, mountpoint in
            let socketPath = cli.scratch.appendingPathComponent("notify.sock").path
            let receiver = try DatagramReceiver(path: socketPath)
            let log = cli.scratch.appendingPathComponent("unit.log").path
            let started = try cli.tool("/bin/sh", "-c", "NOTIFY_SOCKET=\"$1\" \"$2\" mount --foreground --library \"$3\" \"$4\" >\"$5\" 2>&1 </dev/null &",
                                       "sh", socketPath, ShelfCLI.executable.path, cli.library.path, mountpoint, log)
            #expect(started.status == 0, "\(started)")
            let ready = receiver.receive(within: .seconds(30))
            #expect(ready?.hasPrefix("READY=1\n") == true, "got \(ready ?? "nothing")")
            #expect(FileManager.default.fileExists(atPath: mountpoint + "/Books"), "ready means mounted")
            #expect(try String(contentsOfFile: log, encoding: .utf8).contains("shelf: mounted \(cli.library.path) at \(mountpoint)"))

            // What systemd does to stop the unit.
            let pid = try #require(try CrashRecoveryTests.daemonPID(library: cli.library.path))
            #expect(kill(pid, SIGTERM) == 0)
            #expect(receiver.receive(within: .seconds(30)) == "STOPPING=1")
            #expect(try eventually(within: .seconds(30)) {
                try String(contentsOfFile: log, encoding: .utf8).contains("shelf: unmounted \(mountpoint)")
            })
        }
    }

    /// `shelf mount --notify` shows an invalid save, with its reason, through the real
    /// notify-send on a session bus found the way a desktop session offers it
    /// (`$XDG_RUNTIME_DIR/bus`), to a notification server that records what it is asked to show.
    @Test func notifyShowsAnInvalidSaveOnTheDesktop() throws {
        try ShelfCLI.withSampleLibrary { cli, mountpoint in
            var cli = cli
            let desktop = try DesktopSession(in: cli.scratch)
            defer { desktop.stop() }
            cli.environment["XDG_RUNTIME_DIR"] = desktop.runtimeFolder
            cli.environment["DBUS_SESSION_BUS_ADDRESS"] = nil
            let mounted = try cli.run("mount", "--notify", mountpoint, timeout: .seconds(40))
            try #require(mounted.status == 0, "\(mounted)")
            defer { _ = try? cli.run("unmount", mountpoint, timeout: .seconds(20)) }
            let book = mountpoint + "/Books/Walden - Henry David Thoreau.md"
            let text = try String(contentsOfFile: book, encoding: .utf8)
            try text.replacingOccurrences(of: "status: reading", with: "status: sideways")
                .write(toFile: book, atomically: false, encoding: .utf8)
            #expect(eventually(within: .seconds(20)) {
                desktop.shown().contains {
                    $0.hasPrefix("Shelf|Shelf did not save Walden - Henry David Thoreau.md|Books/Walden - Henry David Thoreau.md\\nline 6: status:")
                        && $0.hasSuffix("|2")  // critical
                }
            }, "\(desktop.shown())")
        }
    }

    /// `kill -9` of the daemon leaves a dead mount ("Transport endpoint is not connected"):
    /// `shelf status` says so in one line and `shelf mount` clears it, remounts and replays
    /// the journal.
    @Test func aDeadMountIsRecognisedAndMountingAgainRecoversIt() throws {
        try ShelfCLI.withSampleLibrary { cli, mountpoint in
            try #require(try cli.run("mount", mountpoint, timeout: .seconds(40)).status == 0)
            let pid = try #require(try CrashRecoveryTests.daemonPID(library: cli.library.path))
            let note = "Notes/Stoic themes.md"
            let killed = try cli.tool("python3", "-c", """
                import os, sys
                fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
                os.write(fd, b"Written just before the crash.\\n")
                os.close(fd)
                os.kill(int(sys.argv[2]), 9)
                """, mountpoint + "/" + note, String(pid), timeout: .seconds(20))
            #expect(killed.status == 0, "\(killed)")
            #expect(eventually(within: .seconds(10)) { !ProcessStatus.isRunning(pid) })

            // The kernel ends the connection once the last descriptor of the dead process is
            // closed, a moment after its pid is gone.
            var status = try cli.run("status")
            #expect(try eventually(within: .seconds(10)) {
                status = try cli.run("status")
                return status.stdout.contains("Mounted: no")
            }, "\(status)")
            #expect(status.stdout.split(separator: "\n").filter { $0.contains("Dead:") }.count == 1)
            #expect(status.stdout.contains("\(mountpoint): its mount process is gone"))
            #expect(try cli.run("status", "--json").stdout.contains("\"deadMounts\" : [\n    \"\(mountpoint)\""))

            let again = try cli.run("mount", mountpoint, timeout: .seconds(40))
            #expect(again.status == 0, "\(again)")
            #expect(again.stderr.contains("was a dead mount"))
            #expect(try String(contentsOfFile: mountpoint + "/" + note, encoding: .utf8) == "Written just before the crash.\n")
            #expect(!(try cli.run("status").stdout.contains("Dead:")))

            let live = try cli.run("mount", mountpoint, timeout: .seconds(40))
            #expect(live.status != 0 && live.stderr.contains("shelf unmount \(mountpoint)"), "\(live)")
            #expect(!live.stderr.contains("fusermount3"))
            #expect(try cli.run("unmount", mountpoint, timeout: .seconds(20)).status == 0)
        }
    }
}

/// A Unix datagram socket standing in for systemd's notify socket.
private final class DatagramReceiver {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard descriptor >= 0, bound == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    deinit { close(descriptor) }

    /// The next datagram, or nil when none comes within `deadline`.
    func receive(within deadline: Duration) -> String? {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(deadline.components.seconds * 1000)
        guard poll(&request, 1, milliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }
}
