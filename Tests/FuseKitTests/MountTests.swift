import Foundation
import FuseKit
import FuseTestSupport
import Testing

/// Real kernel mounts of ``MemoryFilesystem``, driven by ordinary tools. Serialized: one
/// mount at a time (the harness also enforces this across test targets).
@Suite(.serialized)
struct MountTests {
    @Test func listsStatsAndReadsFiles() throws {
        let filesystem = MemoryFilesystem()
        filesystem.putFile("hello.txt", "Hello, world\n")
        try TestMount.withMount(filesystem) { mount in
            let listing = try mount.shell("ls -a")
            #expect(listing.succeeded, "\(listing)")
            #expect(listing.stdout.split(separator: "\n") == [".", "..", "hello.txt"])
            #expect(try mount.shell("stat -c '%s %F %a' hello.txt").stdout == "13 regular file 644\n")
            #expect(try mount.shell("cat hello.txt").stdout == "Hello, world\n")
        }
    }
}
