import Foundation
import Testing
import FuseKit
import ShelfModel
import ShelfStore
@testable import ShelfFS
import TestTraits

/// What the kernel is told to do with its copy of a folder's listing, and what a `readdirplus`
/// batch sends: driven without a kernel, as the request handlers call them.
@Suite(.scratchFolders) struct ListingCacheTests {
    let library: MountableLibrary
    let operations: ShelfFuseOperations
    var fs: ShelfFileSystem { operations.fileSystem }
    let notes: UInt64

    /// A folder of 16 notes.
    init() throws {
        library = try MountableLibrary()
        for number in 1...16 { try library.addNote("Note \(number)") }
        operations = try ShelfFuseOperations(store: library.store)
        notes = try operations.fileSystem.lookup(parent: InodeTable.rootInode, name: "Notes").attributes.inode.rawValue
    }

    private func read(_ name: String) throws {
        let inode = try fs.lookup(parent: notes, name: name).attributes.inode.rawValue
        _ = try fs.read(inode, offset: 0, size: 1 << 16)
    }

    private func opendir(_ folder: UInt64) throws -> OpenedFile {
        var result: Result<OpenedFile, Errno>?
        operations.opendir(Request(uid: 0, gid: 0, pid: 0), inode: Inode(folder), flags: OpenFlags(rawValue: 0),
                           reply: OpenReply(operation: "opendir") { result = $0 })
        return try #require(result).get()
    }

    /// Sends one `readdirplus` batch of `folder` as the kernel would ask for it: its entries
    /// reach the kernel.
    private func listPlus(_ folder: UInt64) throws -> [ShelfFileSystem.ListingEntry] {
        let listed = try fs.dotEntries(of: folder) + fs.list(folder).names
        let entries = fs.entries(for: listed[...])
        fs.sent(zip(listed, entries).compactMap { name, entry in
            if case .full = entry, !name.isDotEntry { return name.node } else { return nil }
        })
        return entries
    }

    @Test func aFewReadFilesLeaveTheCachedListingInUseManyRemakeIt() throws {
        #expect(try opendir(notes) == OpenedFile(handle: 1, keepCache: true, cacheDirectory: true),
                "nothing stale: the kernel lists from its copy")
        try read("Note 1.md")
        #expect(fs.listingCache(try fs.list(notes), of: notes) == .serve,
                "one stale name of 16 costs one getattr, less than listing all 16 again")
        try read("Note 2.md")
        #expect(try opendir(notes) == OpenedFile(handle: 2, keepCache: false, cacheDirectory: true),
                "an eighth of the folder stale: the kernel drops its copy and fills it again")
        _ = try listPlus(notes)
        #expect(fs.listingCache(try fs.list(notes), of: notes) == .serve, "the listing refreshed them")
        let status = try fs.lookup(parent: InodeTable.rootInode, name: ".shelf").attributes.inode.rawValue
        #expect(try opendir(status).cacheDirectory == false, "the status folder is never cached")
    }

    /// A file sync wrote beside the notes changes the folder's names: the next open drops the
    /// kernel's copy, which the reads of an open made just before may have filled after the
    /// invalidation reached the kernel. An open with nothing changed keeps it.
    @Test func anOpenAfterNamesChangedElsewhereRefillsTheKernelsCopy() throws {
        #expect(try opendir(notes).keepCache)
        try Data("png".utf8).write(to: URL(fileURLWithPath: fs.parts.plain.realPath(MountPath("Notes/picture.png"))))
        fs.syncView.plainFileChangedElsewhere(MountPath("Notes/picture.png"), wasThere: false)
        let afterChange = try opendir(notes)
        #expect(!afterChange.keepCache && afterChange.cacheDirectory, "the names changed: the kernel fills its copy again")
        #expect(try opendir(notes).keepCache, "nothing changed since: the kernel lists from its copy")
    }

    @Test func namesTheKernelHoldsFreshAreSentAlone() throws {
        func nameOnly(_ entries: [ShelfFileSystem.ListingEntry]) -> Int {
            entries.count(where: { if case .nameOnly = $0 { true } else { false } })
        }
        #expect(nameOnly(try listPlus(notes)) == 0, "the kernel knows none of them yet")
        #expect(nameOnly(try listPlus(notes)) == 16, "all 16 entries are fresh there")

        try read("Note 3.md")
        let note4 = try fs.lookup(parent: notes, name: "Note 4.md").attributes.inode
        fs.parts.kernel.invalidate(.content(note4))
        let entries = try listPlus(notes)
        #expect(nameOnly(entries) == 14, "a read file and one invalidated get their attributes again")
        let listed = try fs.dotEntries(of: notes) + fs.list(notes).names
        let full = zip(listed, entries).compactMap { name, entry in
            if case .full = entry { name.name } else { nil }
        }
        #expect(full == [".", "..", "Note 3.md", "Note 4.md"])

        #expect(fs.parts.inodes.forget(note4.rawValue, count: .max))
        #expect(nameOnly(try listPlus(notes)) == 15, "a name the kernel forgot gets its entry again")
    }
}
