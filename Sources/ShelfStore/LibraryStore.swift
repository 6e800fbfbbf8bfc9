import Foundation
import ShelfModel
import ShelfMarkdown

// SKELETON: signatures agreed between layers; the store helper replaces the bodies.

/// A library: one folder holding `shelf.sqlite` (records, versions, saved source text, trash,
/// change feed, full-text index) and `files/` (the plain-file area of the mount).
///
/// Thread-safe; any number of processes may open the same library (SQLite WAL).
public final class LibraryStore: Sendable {
    /// The library folder.
    public let folder: URL

    /// Where the mount keeps everything that is not an item file (`.obsidian/`, attachments,
    /// editor temp files) and the user's folders, as ordinary files.
    public var plainFilesFolder: URL { folder.appendingPathComponent("files", isDirectory: true) }

    init(folder: URL) { self.folder = folder }

    /// Creates a library in `folder` (created if missing), or opens the one already there.
    public static func create(at folder: URL) throws -> LibraryStore { fatalError("skeleton") }

    /// Opens an existing library; `StoreError.libraryMissing` / `.notALibrary` otherwise.
    public static func open(at folder: URL) throws -> LibraryStore { fatalError("skeleton") }

    // MARK: Reading

    public func record(id: ItemID) throws -> ItemRecord? { fatalError("skeleton") }
    public func record(atPath path: String) throws -> ItemRecord? { fatalError("skeleton") }
    public func summary(id: ItemID) throws -> ItemSummary? { fatalError("skeleton") }
    /// Every live item (not trashed), optionally of one kind, ordered by path.
    public func summaries(kind: ItemKind? = nil) throws -> [ItemSummary] { fatalError("skeleton") }

    // MARK: Writing

    /// Runs `body` in one write transaction (imports use it: 10,000 rows, one commit).
    public func write<T>(_ body: (StoreWriter) throws -> T) throws -> T { fatalError("skeleton") }

    @discardableResult
    public func insert(_ item: Item, path: String? = nil, sourceText: String? = nil) throws -> ItemRecord {
        try write { try $0.insert(item, path: path, sourceText: sourceText) }
    }
    @discardableResult
    public func update(_ item: Item, basedOn version: Int64? = nil, sourceText: String? = nil) throws -> ItemRecord {
        try write { try $0.update(item, basedOn: version, sourceText: sourceText) }
    }

    // MARK: Change feed

    /// Changes with a sequence greater than `sequence`, oldest first.
    public func changes(after sequence: Int64, limit: Int = 1000) throws -> [Change] { fatalError("skeleton") }
    /// The newest sequence number (0 for a new library).
    public func lastSequence() throws -> Int64 { fatalError("skeleton") }

    // MARK: Search and trash

    public func search(_ query: String, limit: Int = 50) throws -> [SearchHit] { fatalError("skeleton") }
    public func trashedItems() throws -> [TrashedItem] { fatalError("skeleton") }
}

/// The writes of one transaction. Every write bumps the item's version, sets its modification
/// time and appends to the change feed; a write that changes nothing does neither.
public struct StoreWriter {
    public func record(id: ItemID) throws -> ItemRecord? { fatalError("skeleton") }
    public func record(atPath path: String) throws -> ItemRecord? { fatalError("skeleton") }
    /// The live book imported from `sourceID`, if any.
    public func bookID(sourceID: String) throws -> ItemID? { fatalError("skeleton") }

    /// Adds an item. `path` nil: `<Kind folder>/<FileNaming name>.md`, uniquified. `sourceText`:
    /// the bytes the file shows (must parse to `item`); nil: the canonical render. An id that is
    /// in the trash brings that item back (its history kept) with this content.
    public func insert(_ item: Item, path: String?, sourceText: String?) throws -> ItemRecord { fatalError("skeleton") }
    /// Replaces the record (never its path) and clears a pending draft. `basedOn`: the version
    /// the writer started from; a newer stored version throws `versionConflict`.
    public func update(_ item: Item, basedOn version: Int64?, sourceText: String?) throws -> ItemRecord { fatalError("skeleton") }
    /// Keeps an invalid save verbatim as what the file shows; the record stays as it was.
    public func saveDraft(id: ItemID, text: String, diagnostics: [Diagnostic]) throws -> ItemRecord { fatalError("skeleton") }
    /// Renames one item file (`pathTaken` if another live item has `path`).
    public func move(id: ItemID, to path: String) throws -> ItemRecord { fatalError("skeleton") }
    /// Renames a folder: every item whose path starts with `from/` moves under `to/`.
    public func moveFolder(from: String, to: String) throws { fatalError("skeleton") }
    /// Soft delete: the item leaves every listing, keeps its path for `restore`.
    public func trash(id: ItemID) throws { fatalError("skeleton") }
    /// Brings an item back at its old path (uniquified if taken since).
    public func restore(id: ItemID) throws -> ItemRecord { fatalError("skeleton") }
    /// Deletes trashed items for good; returns how many.
    public func emptyTrash() throws -> Int { fatalError("skeleton") }
}
