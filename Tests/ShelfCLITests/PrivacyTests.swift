import Foundation
import Testing
import TestSupport
import TestTraits

/// A reading library is personal: what Shelf creates is its owner's only, and so is the mount
/// unless `--allow-other` is asked for.
@Suite(.serialized, .scratchFolders) struct PrivacyTests {
    @Test func theLibraryAndTheMountAreTheOwnersOnly() throws {
        try ShelfCLI.withSampleLibrary { cli, mountpoint in
            try #require(try cli.run("mount", mountpoint, timeout: .seconds(40)).status == 0)
            let library = cli.library.path
            for (path, mode) in [(library, 0o700), (library + "/shelf.sqlite", 0o600), (library + "/shelf.sqlite-wal", 0o600),
                                 (library + "/files", 0o700), (library + "/logs", 0o700),
                                 (library + "/logs/mount.log", 0o600), (library + "/journal", 0o700), (library + "/run", 0o700)] {
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                let actual = try #require(attributes[.posixPermissions] as? Int)
                #expect(actual == mode, "\(path) has mode \(String(actual, radix: 8)), not \(String(mode, radix: 8))")
            }
            // Another user (nobody) is kept out of the mount; the owner is not.
            let stranger = try cli.tool("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "ls", mountpoint,
                                        timeout: .seconds(10))
            #expect(stranger.status != 0 && stranger.stderr.contains("Permission denied"), "\(stranger)")
            #expect(try cli.tool("ls", mountpoint, timeout: .seconds(10)).stdout.contains("Books"))
            #expect(try cli.run("unmount", mountpoint, timeout: .seconds(20)).status == 0)
        }
    }

    /// `--allow-other` really lets another user in, on the files' own modes (the kernel checks
    /// them): what the owner opened up (0755 folders, a 0644 note) nobody may read, not write;
    /// a file left 0600 stays closed. Without the option the same modes let nobody in at all.
    @Test(arguments: [true, false])
    func allowOtherLetsAnotherUserInOnTheFilesModes(allowOther: Bool) throws {
        try ShelfCLI.withSampleLibrary { cli, mountpoint in
            try #require(try cli.run(["mount", mountpoint] + (allowOther ? ["--allow-other"] : []), timeout: .seconds(40)).status == 0)
            let note = mountpoint + "/Notes/Stoic themes.md"
            let closed = mountpoint + "/Notes/Reading goals 2026.md"
            for (path, mode) in [(mountpoint, 0o755), (mountpoint + "/Notes", 0o755), (note, 0o644), (closed, 0o600)] {
                try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            }
            func asNobody(_ script: String) throws -> CommandResult {
                try cli.tool("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", script,
                             timeout: .seconds(10))
            }
            let read = try asNobody("cat '\(note)'")
            let written = try asNobody("echo more >> '\(note)'")
            let closedRead = try asNobody("cat '\(closed)'")
            if allowOther {
                #expect(read.status == 0 && read.stdout == FileManager.default.contents(atPath: note).map { String(decoding: $0, as: UTF8.self) },
                        "\(read)")
                #expect(written.status != 0 && written.stderr.contains("Permission denied"), "\(written)")
                #expect(closedRead.status != 0 && closedRead.stderr.contains("Permission denied"), "\(closedRead)")
            } else {
                for result in [read, written, closedRead] {
                    #expect(result.status != 0 && result.stderr.contains("Permission denied"), "\(result)")
                }
            }
            #expect(try cli.run("unmount", mountpoint, timeout: .seconds(20)).status == 0)
        }
    }
}
