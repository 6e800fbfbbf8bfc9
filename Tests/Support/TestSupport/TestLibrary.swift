import Foundation
import ShelfModel
import ShelfStore

/// A new library in a temporary folder, removed with it: the library fixture of every test
/// target (ShelfFSTests' `MountableLibrary` adds the mount).
open class TestLibrary: @unchecked Sendable {
    /// The temporary folder the library is in, with room beside it for other files.
    public let scratch: TemporaryFolder
    /// The library folder.
    public let folder: URL
    public let store: LibraryStore

    public init() throws {
        scratch = try TemporaryFolder()
        folder = scratch.child("library")
        store = try LibraryStore.create(at: folder)
    }

    /// Another handle on the same library, as the CLI in another process would open it.
    public func reopened() throws -> LibraryStore { try LibraryStore.open(at: folder) }

    @discardableResult
    public func addBook(_ title: String = "Dune", author: String = "Frank Herbert") throws -> ItemRecord {
        try store.insert(.book(Book(title: title, author: author, currentPage: 12, tags: ["scifi"],
                                    passages: [Passage(page: 42, text: "Fear is the mind-killer.")])))
    }

    @discardableResult
    public func addNote(_ title: String = "Plan", content: String = "Read more.\n") throws -> ItemRecord {
        try store.insert(.note(Note(title: title, content: content)))
    }
}
