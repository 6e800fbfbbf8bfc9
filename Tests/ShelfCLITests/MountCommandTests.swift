import Foundation
import TestSupport
import TestTraits
import Testing
import ShelfFS
import ShelfSystem

/// `shelf mount` / `shelf unmount` as a user runs them: a background daemon, one-line errors.
@Suite(.serialized, .scratchFolders) struct MountCommandTests {
    func withSampleMount(_ body: (ShelfCLI, String) throws -> Void) throws {
        try ShelfCLI.withSampleLibrary(body)
    }

    @Test func mountsInTheBackgroundAndUnmountsCleanly() throws {
        try withSampleMount { cli, mountpoint in
            let mounted = try cli.run("mount", mountpoint, timeout: .seconds(40))
            #expect(mounted.status == 0, "\(mounted.stderr)")
            #expect(mounted.stdout.contains("Mounted \(cli.library.path) at \(mountpoint)"))

            let listing = try cli.tool("ls", mountpoint + "/Books", timeout: .seconds(10))
            #expect(listing.stdout.contains("Walden - Henry David Thoreau.md"))
            #expect(try cli.run("status").stdout.contains("Mounted: \(mountpoint)"))

            let again = try cli.run("mount", mountpoint, timeout: .seconds(40))
            #expect(again.status != 0)
            #expect(again.stderr.contains("already"), "\(again.stderr)")

            let unmounted = try cli.run("unmount", mountpoint, timeout: .seconds(20))
            #expect(unmounted.status == 0, "\(unmounted.stderr)")
            #expect(try cli.run("status").stdout.contains("Mounted: no"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: mountpoint).isEmpty)
        }
    }

    /// The daemon saves a file rewritten in place when its writer closes it (no request comes
    /// for the close: the daemon's close watcher sees it), and `sed -i` at its rename.
    @Test func editsThroughTheDaemonReachTheStore() throws {
        try withSampleMount { cli, mountpoint in
            #expect(try cli.run("mount", mountpoint, timeout: .seconds(40)).status == 0)
            let walden = "Books/Walden - Henry David Thoreau.md"
            let file = mountpoint + "/" + walden
            let rewrite = try cli.tool("/bin/sh", "-c", "sed 's/^current_page: 120$/current_page: 121/' \"$0\" > \"$0.new\" && cat \"$0.new\" > \"$0\" && rm \"$0.new\"",
                                       file, timeout: .seconds(10))
            #expect(rewrite.status == 0, "\(rewrite.stderr)")
            // The daemon's save reaches the store (that the close itself saves is shown through
            // a mount without an idle save in ShelfFSTests; speed lives in the benchmarks).
            #expect(try eventually(within: .seconds(10)) { try cli.run("show", walden).stdout.contains("current_page: 121") })

            let sed = try cli.tool("sed", "-i", "s/^status: reading$/status: read/", file, timeout: .seconds(10))
            #expect(sed.status == 0, "\(sed.stderr)")
            let shown = try cli.run("show", walden).stdout
            #expect(shown.contains("status: read\n") && shown.contains("current_page: 121"))
            #expect(try cli.run("unmount", mountpoint, timeout: .seconds(20)).status == 0)
        }
    }

    /// `shelf unmount --library` (no mountpoint) takes down every mount of the library and
    /// returns once the daemon has committed a save closed just before it, and exited.
    @Test func unmountByLibraryCommitsPendingSavesAndWaitsForTheDaemon() throws {
        try withSampleMount { cli, mountpoint in
            #expect(try cli.run("mount", mountpoint, timeout: .seconds(40)).status == 0)
            let daemon = try #require(try CrashRecoveryTests.daemonPID(library: cli.library.path))
            let note = "Notes/Stoic themes.md"
            let data = "Saved at the last moment.\n"
            let write = try cli.tool("python3", "-c", "import sys; open(sys.argv[1], 'w').write(sys.argv[2])",
                                     mountpoint + "/" + note, data, timeout: .seconds(10))
            #expect(write.status == 0, "\(write.stderr)")
            let unmounted = try cli.run("unmount", "--library", cli.library.path, timeout: .seconds(60))
            #expect(unmounted.status == 0, "\(unmounted.stderr)")
            #expect(!ProcessStatus.isRunning(daemon), "the daemon has exited when unmount returns")
            #expect(try cli.run("show", note).stdout == data)
        }
    }

    @Test func badMountpointsGetOneLineAndNoMount() throws {
        try withSampleMount { cli, mountpoint in
            let missing = cli.scratch.appendingPathComponent("no-such-folder").path
            let notEmpty = cli.scratch.appendingPathComponent("full").path
            try FileManager.default.createDirectory(atPath: notEmpty, withIntermediateDirectories: true)
            try "keep me".write(toFile: notEmpty + "/file.txt", atomically: true, encoding: .utf8)

            for (path, mention) in [(missing, "does not exist"), (notEmpty, "not empty")] {
                let result = try cli.run("mount", path, timeout: .seconds(40))
                #expect(result.status != 0)
                #expect(result.stderr.contains(mention), "\(result.stderr)")
                #expect(result.stderr.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").count == 1)
            }
            #expect(try String(contentsOfFile: notEmpty + "/file.txt", encoding: .utf8) == "keep me")
            let notMounted = try cli.run("unmount", mountpoint)
            #expect(notMounted.status != 0)
            #expect(notMounted.stderr.contains("not a mounted Shelf library"))
        }
    }
}
