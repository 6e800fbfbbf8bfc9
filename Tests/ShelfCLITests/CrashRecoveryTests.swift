import Foundation
import Testing
import TestSupport
import TestTraits

/// `kill -9` of the mount daemon at the worst moments: every byte a program wrote is there
/// after the next mount — the save the daemon had not committed yet comes back from the journal.
@Suite(.serialized, .scratchFolders) struct CrashRecoveryTests {
    /// Python run with the mountpoint's note path, the daemon's pid and a scratch file; it
    /// kills the daemon at its moment and writes what the file must hold into the scratch file.
    static let moments: [(name: String, script: String)] = [
        ("right after close", """
            import os, sys
            path, pid, expected = sys.argv[1], int(sys.argv[2]), sys.argv[3]
            data = b"---\\ntitle: Stoic themes\\n---\\nWritten just before the crash.\\n\\xff not UTF-8\\n"
            with open(path, "wb") as file:
                file.write(data)
            os.kill(pid, 9)
            open(expected, "wb").write(data)
            """),
        ("right after fsync", """
            import os, sys
            path, pid, expected = sys.argv[1], int(sys.argv[2]), sys.argv[3]
            data = b"---\\ntitle: Stoic themes\\n---\\nSynced before the crash.\\n"
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
            os.write(fd, data)
            os.fsync(fd)
            os.kill(pid, 9)
            open(expected, "wb").write(data)
            """),
        ("right after an atomic save's rename", """
            import os, sys
            path, pid, expected = sys.argv[1], int(sys.argv[2]), sys.argv[3]
            data = b"---\\ntitle: Stoic themes\\n---\\nRenamed into place before the crash.\\n"
            temp = os.path.join(os.path.dirname(path), ".Stoic themes.md.tmp")
            with open(temp, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp, path)
            os.kill(pid, 9)
            open(expected, "wb").write(data)
            """),
        ("in the middle of a long write", """
            import os, sys
            path, pid, expected = sys.argv[1], int(sys.argv[2]), sys.argv[3]
            written = b""
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
            for number in range(40):
                chunk = (f"line {number} of a long save. " * 2000).encode()
                if number == 10:
                    os.kill(pid, 9)
                try:
                    count = os.write(fd, chunk)
                except OSError:
                    break
                written += chunk[:count]
            open(expected, "wb").write(written)
            """),
    ]

    @Test(arguments: moments.map(\.name))
    func everyByteWrittenSurvivesKill9(_ moment: String) throws {
        let script = try #require(Self.moments.first { $0.name == moment }).script
        try ShelfCLI.withSampleLibrary { cli, mountpoint in try crash(cli, mountpoint, script) }
    }

    private func crash(_ cli: ShelfCLI, _ mountpoint: String, _ script: String) throws {
        let note = "Notes/Stoic themes.md"
        let before = try cli.run("show", note).stdout

        try #require(try cli.run("mount", mountpoint, timeout: .seconds(40)).status == 0)
        let pid = try #require(try Self.daemonPID(library: cli.library.path))
        let expected = cli.scratch.appendingPathComponent("expected").path
        let crash = try cli.tool("python3", "-c", script, mountpoint + "/" + note, String(pid), expected,
                                 timeout: .seconds(30))
        #expect(crash.status == 0, "\(crash.stderr)")
        let written = try Data(contentsOf: URL(fileURLWithPath: expected))
        #expect(written.count > 0)
        ShelfCLI.forceUnmount(mountpoint)

        try #require(try cli.run("mount", mountpoint, timeout: .seconds(40)).status == 0)
        let reread = try Data(contentsOf: URL(fileURLWithPath: mountpoint + "/" + note))
        #expect(reread == written, "the file reads \(reread.count) bytes, \(written.count) were written")
        #expect(!before.isEmpty && reread != Data(before.utf8))
        #expect(!(try cli.run("status").stdout.contains("Unsaved:")), "the journal was replayed")
        #expect(try Self.keptVersions(of: note, cli).contains(before), "the version before the crash is in the history")
        #expect(try cli.run("unmount", mountpoint, timeout: .seconds(20)).status == 0)
    }

    /// The bytes of every earlier version `shelf history` lists for `item`.
    static func keptVersions(of item: String, _ cli: ShelfCLI) throws -> [String] {
        let listing = try cli.run("history", item)
        try #require(listing.status == 0, "\(listing.stderr)")
        let earlier = listing.stdout.split(separator: "\n").dropFirst()  // the first line is the current version
        return try earlier.map { line in
            let version = String(line.prefix { $0 != "\t" })
            return try cli.run("show", item, "--version", version).stdout
        }
    }

    /// The pid of the `shelf mount --foreground` daemon serving `library`.
    static func daemonPID(library: String) throws -> Int32? {
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
            guard let pid = Int32(entry),
                  let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let arguments = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if arguments.contains("--foreground"), arguments.contains(library), arguments.contains("mount") { return pid }
        }
        return nil
    }
}
