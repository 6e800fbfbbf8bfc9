import Foundation
import Testing
import TestSupport
import TestTraits
import ShelfModel
import ShelfStore
@testable import ShelfFS

/// Times, mode bits and user attributes set on item files stick, across a remount, without
/// touching the bytes: what rsync -a, cp -p, tar and file managers' tags need.
@Suite(.serialized, .scratchFolders) struct MountMetadataTests {
    @Test func timesModeAndUserAttributesOfAnItemStick() throws {
        let library = try MountableLibrary()
        let book = try library.addBook()
        let file = "'\(book.path)'"
        try library.withMount { mount in
            try mount.sh("TZ=UTC touch -m -d '2020-01-02 03:04:05.25' \(file) && chmod 600 \(file)")
            try mount.sh("setfattr -n user.xdg.tags -v 'scifi,classic' \(file)")
            #expect(try mount.sh("stat -c '%Y %a' \(file)") == "1577934245 600\n")
            #expect(try mount.sh("getfattr --only-values -n user.xdg.tags \(file)") == "scifi,classic")
            #expect(!(try mount.shell("setfattr -n user.shelf.id -v other \(file)").succeeded), "Shelf's own attributes are read-only")
            #expect(!(try mount.shell("setfattr -n trusted.x -v 1 \(file)").succeeded))
        }
        try library.withMount { mount in
            #expect(try mount.sh("stat -c '%Y %a' \(file)") == "1577934245 600\n")
            #expect(try mount.sh("getfattr -d --absolute-names \(file) | grep '^user\\.'") == "user.xdg.tags=\"scifi,classic\"\n",
                    "a listing shows the user's attributes; Shelf's are read by name")
            #expect(try mount.sh("getfattr --only-values -n user.shelf.id \(file)") == book.item.id.rawValue)
            #expect(try mount.bytes(book.path) == Array(book.content), "the bytes did not change")
            try mount.sh("setfattr -x user.xdg.tags \(file)")
            #expect(!(try mount.shell("getfattr -n user.xdg.tags \(file)").succeeded))
        }
        let stored = try #require(try library.store.record(id: book.item.id))
        #expect(stored.version == book.version, "metadata is no new version of the file")
        #expect(stored.permissions == 0o600)
    }

    @Test func aTimeSetAfterWritingIsNotOvertakenByTheSave() throws {
        let library = try MountableLibrary()
        let note = try library.addNote()
        try library.withMount { mount in
            // cp -p: write, set the source's times on the open file, close.
            let result = try mount.run("python3", ["-c", """
                import os, sys
                fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
                os.write(fd, b"Copied with its times.\\n")
                os.utime(fd, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
                os.close(fd)
                """, note.path])
            #expect(result.succeeded, "\(result)")
            try library.waitUntilSaved()
            #expect(try mount.sh("stat -c %Y '\(note.path)'") == "1000000000\n")
            #expect(try mount.text(note.path) == "Copied with its times.\n")
        }
    }

    /// rsync writes a temp file, sets its mode, times and attributes, and renames it over the
    /// item; a second run compares sizes and times and must find nothing to do.
    @Test func rsyncOfAVaultTwiceTransfersNothingTheSecondTime() throws {
        let library = try MountableLibrary()
        try library.addBook()
        let vault = library.folder.deletingLastPathComponent()
            .appendingPathComponent("vault-\(UUID().uuidString.prefix(8))", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: vault) }
        try FileManager.default.createDirectory(at: vault, withIntermediateDirectories: true)
        let setup = try CommandRunner.run("/bin/sh", ["-c", """
            set -e
            mkdir -p Books Notes/Ideas .obsidian attachments
            printf -- '---\\ntitle: Emma\\nauthor: Jane Austen\\n---\\n' > 'Books/Emma - Jane Austen.md'
            printf 'A note without frontmatter.\\n' > Notes/Ideas/Loose.md
            printf -- '---\\ntitle: Tagged\\n---\\nbody\\n' > Notes/Tagged.md
            printf '{}' > .obsidian/app.json
            head -c 3000 /dev/urandom > attachments/cover.jpg
            chmod 600 Notes/Ideas/Loose.md
            setfattr -n user.xdg.tags -v reading Notes/Tagged.md
            touch -d '2021-05-06 07:08:09' Books/*.md Notes/*.md Notes/Ideas/*.md
            """], in: vault.path, timeout: .seconds(10))
        try #require(setup.succeeded, "\(setup)")
        try library.withMount { mount in
            let first = try mount.run("rsync", ["-a", "-X", vault.path + "/", mount.path("")], timeout: .seconds(30))
            #expect(first.succeeded, "\(first)")
            try library.waitUntilSaved()
            let second = try mount.run("rsync", ["-a", "-X", "-i", "--stats", vault.path + "/", mount.path("")],
                                       timeout: .seconds(30))
            #expect(second.succeeded, "\(second)")
            #expect(second.stdout.contains("Number of regular files transferred: 0\n"), "\(second.stdout)")
            let itemized = second.stdout.split(separator: "\n", omittingEmptySubsequences: false).prefix { !$0.isEmpty }
            #expect(itemized.isEmpty, "rsync changed: \(itemized)")
            #expect(try mount.sh("getfattr --only-values -n user.xdg.tags Notes/Tagged.md") == "reading")
            #expect(try mount.sh("stat -c %a Notes/Ideas/Loose.md") == "600\n")
        }
        #expect(try library.store.record(atPath: "Notes/Ideas/Loose.md")?.text == "A note without frontmatter.\n")
    }
}
