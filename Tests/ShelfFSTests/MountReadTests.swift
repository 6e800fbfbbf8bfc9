import Foundation
import Testing
import TestSupport
import TestTraits
import ShelfModel
import ShelfStore
@testable import ShelfFS

/// Reading a library through a real mount, with real programs.
@Suite(.serialized, .scratchFolders) struct MountReadTests {
    @Test func listsAndReadsItemsExactly() throws {
        let library = try MountableLibrary()
        let book = try library.addBook()
        let note = try library.addNote()
        try library.withMount { mount in
            let listing = try mount.sh("ls -a . Books Notes")
            #expect(!listing.contains(".shelf"), "the status folder is not listed")
            #expect(try mount.sh("ls .shelf").contains("status.json"), "but it is reachable by its path")
            #expect(listing.contains((book.path as NSString).lastPathComponent))
            #expect(listing.contains((note.path as NSString).lastPathComponent))
            #expect(try mount.text(book.path) == book.text)
            let size = try mount.sh("stat -c %s '\(book.path)'").trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(size == String(book.text.utf8.count))
            let long = try mount.sh("ls -l Books").split(separator: "\n").last.map { $0.split(separator: " ") } ?? []
            #expect(long.count > 4 && long[4] == String(book.text.utf8.count), "ls -l shows the exact size")
            #expect(try mount.sh("cat '\(note.path)'") == note.text)
            #expect(try mount.sh("grep -rl 'mind-killer' .").contains(book.path))
            #expect(try mount.sh("find . -name '*.md' | sort").split(separator: "\n").count == 2)
            #expect(try mount.sh("flock '\(book.path)' -c 'echo locked'") == "locked\n")
            // statfs is the library disk's: same block size and total, free blocks within what
            // other tests may write meanwhile (256 MiB).
            func sizes(_ folder: String) throws -> [Int] {
                try mount.sh("stat -f -c '%S %b %a' '\(folder)'").split(separator: " ")
                    .map { try #require(Int($0.trimmingCharacters(in: .whitespacesAndNewlines))) }
            }
            let seen = try sizes(".")
            let disk = try sizes(library.folder.path)
            #expect(seen.count == 3 && seen.prefix(2) == disk.prefix(2), "\(seen) vs \(disk)")
            #expect(abs(seen[2] - disk[2]) * disk[0] < 256 << 20, "\(seen) vs \(disk)")
        }
    }

    @Test func extendedAttributesDescribeTheItem() throws {
        let library = try MountableLibrary()
        let book = try library.addBook()
        try library.withMount { mount in
            let id = try mount.sh("getfattr --only-values -n user.shelf.id '\(book.path)'")
            #expect(id == book.item.id.rawValue)
            #expect(try mount.sh("getfattr --only-values -n user.shelf.kind '\(book.path)'") == "book")
            #expect(try mount.sh("getfattr --only-values -n user.shelf.version '\(book.path)'") == String(book.version))
            let error = try mount.shell("getfattr -n user.shelf.error '\(book.path)'")
            #expect(!error.succeeded)
            #expect(error.stderr.contains("No such attribute"))
        }
    }

    @Test func pythonFrontmatterLoadsEveryFile() throws {
        let library = try MountableLibrary()
        try library.addBook()
        try library.addBook("Emma", author: "Jane Austen")
        try library.addNote()
        try library.withMount { mount in
            let script = """
            import frontmatter, pathlib
            for p in sorted(pathlib.Path('.').rglob('*.md')):
                post = frontmatter.load(p)
                print(post['id'], post['title'])
            """
            let output = try mount.run("python3", ["-c", script])
            #expect(output.succeeded, "\(output)")
            #expect(output.stdout.split(separator: "\n").count == 3)
        }
    }

    /// After two of sixteen files are read, the next listing is made again; the names the
    /// kernel still holds fresh go without entries. Every name must still list with its inode,
    /// and `stat` must still answer each exactly.
    @Test func aListingMadeAgainAfterReadsStaysExact() throws {
        let library = try MountableLibrary()
        let notes = try (1...16).map { try library.addNote("Note \($0)", content: "Text \($0).\n") }
        try library.withMount { mount in
            try mount.sh("ls Notes >/dev/null && cat 'Notes/Note 1.md' 'Notes/Note 2.md' >/dev/null")
            let script = """
            import os
            for entry in sorted(os.scandir('Notes'), key=lambda entry: entry.name):
                info = os.stat(entry.path)
                print(entry.name, entry.inode() == info.st_ino, info.st_size)
            """
            let output = try mount.run("python3", ["-c", script])
            #expect(output.succeeded, "\(output)")
            let expected = notes.sorted { $0.path < $1.path }.map {
                "\(($0.path as NSString).lastPathComponent) True \($0.content.count)\n"
            }
            #expect(output.stdout == expected.joined())
        }
    }
}
