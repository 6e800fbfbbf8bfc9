import Foundation
import Testing
import TestSupport

/// A reading library is personal: what Shelf creates is its owner's only, and so is the mount
/// unless `--allow-other` is asked for.
@Suite(.serialized) struct PrivacyTests {
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
}
