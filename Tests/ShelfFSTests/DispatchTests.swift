import Foundation
import Glibc
import Synchronization
import Testing
import FuseKit
import ShelfModel
import ShelfStore
@testable import ShelfFS

/// The filesystem driven directly, without a kernel: names, the rename table and commits.
@Suite struct DispatchTests {
    let library: TestLibrary
    let fs: ShelfFileSystem

    init() throws {
        library = try TestLibrary()
        try library.addBook()
        try library.addNote()
        fs = try ShelfFileSystem(store: library.store)
    }

    private var root: UInt64 { InodeTable.rootInode }

    private func folder(_ path: String) throws -> UInt64 {
        var inode = root
        for name in path.split(separator: "/") {
            inode = try fs.lookup(parent: inode, name: String(name)).attributes.inode.rawValue
        }
        return inode
    }

    /// Creates `name` in `folder` with `text`, closes it, and returns its inode.
    @discardableResult
    private func writeFile(_ folder: String, _ name: String, _ text: String) throws -> UInt64 {
        let created = try fs.create(parent: try self.folder(folder), name: name, mode: 0o644,
                                    flags: OpenFlags(rawValue: O_WRONLY | O_CREAT | O_TRUNC))
        _ = try fs.write(handle: created.file.handle, offset: 0, data: Array(text.utf8))
        try fs.flush(handle: created.file.handle)
        try fs.release(handle: created.file.handle)
        return created.entry.attributes.inode.rawValue
    }

    private func readFile(_ inode: UInt64) throws -> String {
        let opened = try fs.open(inode, flags: OpenFlags(rawValue: O_RDONLY))
        defer { try? fs.release(handle: opened.handle) }
        return String(decoding: try fs.read(handle: opened.handle, offset: 0, size: 1 << 20), as: UTF8.self)
    }

    @Test func listingMergesItemsPlainFilesAndStatus() throws {
        _ = try writeFile("Notes", "picture.png", "png")
        let names = try fs.list(root).map(\.name)
        #expect(names == [".shelf", "Books", "Notes"])
        #expect(try fs.list(try folder("Notes")).map(\.name) == ["Plan.md", "picture.png"])
        #expect(try fs.list(try folder(".shelf")).map(\.name) == StatusFolder.fileNames)
        #expect(try fs.lookup(parent: root, name: "missing").isNegative)
    }

    @Test func statSizeIsTheStoredSizeWithoutReading() throws {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let entry = try fs.lookup(parent: try folder("Notes"), name: "Plan.md")
        #expect(entry.attributes.size == UInt64(record.content.utf8.count))
        #expect(entry.attributes.modificationTime == FileTime(record.modified))
        #expect(try readFile(entry.attributes.inode.rawValue) == record.content)
    }

    @Test func eachOpenReadsOneVersion() throws {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let inode = try fs.lookup(parent: try folder("Notes"), name: "Plan.md").attributes.inode.rawValue
        let first = try fs.open(inode, flags: OpenFlags(rawValue: O_RDONLY))
        guard case .note(var note) = record.item else { return }
        note.content = "Changed elsewhere.\n"
        try library.store.update(.note(note))
        #expect(String(decoding: try fs.read(handle: first.handle, offset: 0, size: 4096), as: UTF8.self) == record.content)
        let second = try fs.open(inode, flags: OpenFlags(rawValue: O_RDONLY))
        #expect(!second.keepCache, "the version changed since the kernel cached it")
        #expect(String(decoding: try fs.read(handle: second.handle, offset: 0, size: 4096), as: UTF8.self).contains("Changed elsewhere."))
        // Once the mount has followed the change and the kernel has asked for the new size
        // (the follower invalidates the attributes), the page cache serves again.
        #expect(try ChangeFollower(fileSystem: fs, after: fs.loadedSequence).poll() == 1)
        _ = try fs.cachedAttributes(of: inode)
        let third = try fs.open(inode, flags: OpenFlags(rawValue: O_RDONLY))
        #expect(!third.directIO && !third.keepCache, "the kernel's pages are still the old version's")
        let fourth = try fs.open(inode, flags: OpenFlags(rawValue: O_RDONLY))
        #expect(fourth.keepCache, "unchanged since the last open")
    }

    @Test func tempFileRenamedOverAnItemIsAnAtomicSave() throws {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let text = record.content.replacingOccurrences(of: "Read more.", with: "Read less.")
        let notes = try folder("Notes")
        try writeFile("Notes", "sedX1b2c3", text)
        try fs.rename(parent: notes, name: "sedX1b2c3", newParent: notes, newName: "Plan.md", flags: [])
        let saved = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        #expect(saved.item.id == record.item.id)
        #expect(saved.content == text)
        #expect(try fs.list(notes).map(\.name) == ["Plan.md"])
    }

    @Test func itemToBackupNameLeavesAndComesBackWithItsID() throws {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let notes = try folder("Notes")
        try fs.rename(parent: notes, name: "Plan.md", newParent: notes, newName: "Plan.md~", flags: [])
        #expect(try library.store.trashedItems().map(\.id) == [record.item.id])
        let backup = try fs.lookup(parent: notes, name: "Plan.md~").attributes.inode.rawValue
        #expect(try readFile(backup) == record.content)
        // vim: write the new file with the same text, then delete the backup.
        try writeFile("Notes", "Plan.md", record.content)
        try fs.unlink(parent: notes, name: "Plan.md~")
        let back = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        #expect(back.item.id == record.item.id)
        #expect(back.version > record.version)
        #expect(try library.store.trashedItems().isEmpty)
        #expect(try fs.list(notes).map(\.name) == ["Plan.md"])
    }

    @Test func aSaveOverAChangeFromElsewhereKeepsBothSides() throws {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        let inode = try fs.lookup(parent: try folder("Notes"), name: "Plan.md").attributes.inode.rawValue
        let opened = try fs.open(inode, flags: OpenFlags(rawValue: O_WRONLY | O_APPEND))
        guard case .note(var elsewhere) = record.item else { return }
        elsewhere.content = "Changed by the CLI.\n"
        try library.reopened().update(.note(elsewhere))
        _ = try fs.write(handle: opened.handle, offset: 0, data: Array("Appended.\n".utf8))
        try fs.release(handle: opened.handle)
        let saved = try #require(try library.store.record(id: record.item.id))
        #expect(saved.content == record.content + "Appended.\n")
        let copy = try #require(try library.store.summaries(kind: .note).first { $0.path.contains("(conflict ") })
        guard case .note(let kept) = try #require(try library.store.record(id: copy.id)).item else { return }
        #expect(kept.content == "Changed by the CLI.\n")
    }

    @Test func aCopyOfALiveItemIsANewItem() throws {
        let record = try #require(try library.store.record(atPath: "Notes/Plan.md"))
        try writeFile("Notes", "Copy.md", record.content)
        let copy = try #require(try library.store.record(atPath: "Notes/Copy.md"))
        #expect(copy.item.id != record.item.id)
        #expect(try library.store.record(id: record.item.id)?.path == "Notes/Plan.md")
    }

    @Test func invalidSaveBecomesADraft() throws {
        let book = try #require(try library.store.summaries(kind: .book).first)
        let inode = try fs.lookup(parent: try folder("Books"), name: MountPath(book.path).name).attributes.inode.rawValue
        let opened = try fs.open(inode, flags: OpenFlags(rawValue: O_WRONLY | O_TRUNC))
        let invalid = "---\nid: \(book.id)\ntitle: Dune\ncurrent_page: many\n---\n"
        _ = try fs.write(handle: opened.handle, offset: 0, data: Array(invalid.utf8))
        try fs.flush(handle: opened.handle)
        let stored = try #require(try library.store.record(id: book.id))
        #expect(stored.content == invalid)
        #expect(stored.draftDiagnostics?.isEmpty == false)
        let error = String(decoding: try fs.extendedAttribute(inode, name: "user.shelf.error"), as: UTF8.self)
        #expect(error.contains("current_page"))
        let report = String(decoding: try fs.statusFolder.content(of: "errors.txt"), as: UTF8.self)
        #expect(report.hasPrefix(book.path + "\n  line 4:"))
    }

    @Test func foldersMoveTheirItemsAndKindsDoNotMix() throws {
        let notes = try folder("Notes")
        _ = try fs.makeDirectory(parent: notes, name: "Shelf", mode: 0o755)
        try fs.rename(parent: notes, name: "Plan.md", newParent: try folder("Notes/Shelf"), newName: "Plan.md", flags: [])
        try fs.rename(parent: notes, name: "Shelf", newParent: notes, newName: "Archive", flags: [])
        #expect(try library.store.summaries(kind: .note).map(\.path) == ["Notes/Archive/Plan.md"])
        #expect(throws: Errno(ENOTEMPTY)) { try fs.removeDirectory(parent: notes, name: "Archive") }
        #expect(throws: Errno(EXDEV)) {
            try fs.rename(parent: try folder("Notes/Archive"), name: "Plan.md", newParent: try folder("Books"),
                          newName: "Plan.md", flags: [])
        }
        #expect(throws: Errno(EACCES)) { try fs.unlink(parent: try folder(".shelf"), name: "errors.txt") }
        #expect(throws: Errno(EBUSY)) { try fs.removeDirectory(parent: root, name: "Books") }
    }

    @Test func changesFromOutsideReachTheIndex() throws {
        let follower = ChangeFollower(fileSystem: fs, after: fs.loadedSequence)
        let other = try library.reopened()
        let added = try other.insert(.note(Note(title: "Elsewhere")))
        #expect(try follower.poll() == 1)
        #expect(fs.resolve(MountPath(added.path)) == .item(added.item.id))
        try other.write { try $0.trash(id: added.item.id) }
        try follower.poll()
        #expect(fs.resolve(MountPath(added.path)) == nil)
    }
}

/// What the change follower tells the kernel, recorded instead of sent.
@Suite struct InvalidationTests {
    let library: TestLibrary
    let fs: ShelfFileSystem
    let follower: ChangeFollower
    let sent = SentInvalidations()
    let notifier = Notifier()

    init() throws {
        library = try TestLibrary()
        try library.addNote()
        fs = try ShelfFileSystem(store: library.store)
        follower = ChangeFollower(fileSystem: fs, after: fs.loadedSequence)
        fs.attach(notifier)
        notifier.start { [sent] invalidation in
            sent.record(invalidation)
            return 0
        }
    }

    /// Polls the feed and returns what was sent to the kernel because of it.
    private func poll() throws -> [Notifier.Invalidation] {
        try follower.poll()
        #expect(notifier.waitUntilIdle())
        return sent.take()
    }

    private func changeElsewhere(_ content: String) throws {
        let other = try library.reopened()
        let record = try #require(try other.record(atPath: "Notes/Plan.md"))
        guard case .note(var note) = record.item else { return }
        note.content = content
        try other.update(.note(note))
    }

    @Test func openWritersKeepTheirPagesAndOpenFilesTheirNames() throws {
        let notes = try fs.lookup(parent: InodeTable.rootInode, name: "Notes").attributes.inode
        let plan = try fs.lookup(parent: notes.rawValue, name: "Plan.md").attributes.inode
        let writer = try fs.open(plan.rawValue, flags: OpenFlags(rawValue: O_RDWR))

        try changeElsewhere("One.\n")
        #expect(try poll() == [.attributes(plan)])

        try fs.release(handle: writer.handle)
        try changeElsewhere("Two.\n")
        #expect(try poll() == [.content(plan)])

        let reader = try fs.open(plan.rawValue, flags: OpenFlags(rawValue: O_RDONLY))
        let id = try #require(try library.store.record(atPath: "Notes/Plan.md")).item.id
        try library.reopened().write { try $0.trash(id: id) }
        #expect(try poll().isEmpty, "an open file is not deleted under its reader")
        try fs.release(handle: reader.handle)

        try library.reopened().write { _ = try $0.restore(id: id) }
        #expect(try poll() == [.entry(parent: notes, name: "Plan.md")], "back: its cached \"no such file\" goes")
        try library.reopened().write { try $0.trash(id: id) }
        #expect(try poll() == [.deletion(parent: notes, child: plan, name: "Plan.md")])
    }

    @Test func ownSavesNeedNoInvalidation() throws {
        let notes = try fs.lookup(parent: InodeTable.rootInode, name: "Notes").attributes.inode
        let plan = try fs.lookup(parent: notes.rawValue, name: "Plan.md").attributes.inode
        let writer = try fs.open(plan.rawValue, flags: OpenFlags(rawValue: O_WRONLY | O_APPEND))
        _ = try fs.write(handle: writer.handle, offset: 0, data: Array("More.\n".utf8))
        try fs.release(handle: writer.handle)
        #expect(try poll().isEmpty)
    }
}

final class SentInvalidations: Sendable {
    private let sent = Mutex<[Notifier.Invalidation]>([])

    func record(_ invalidation: Notifier.Invalidation) { sent.withLock { $0.append(invalidation) } }

    /// What was sent since the last call.
    func take() -> [Notifier.Invalidation] {
        sent.withLock { sent in
            defer { sent.removeAll() }
            return sent
        }
    }
}
