// Public surface of the store, shared with ShelfImport, ShelfFS and the CLI.
import Foundation
import ShelfModel
import ShelfMarkdown

/// An item as stored: the record, its file form and its bookkeeping.
public struct ItemRecord: Hashable, Sendable {
    public var item: Item
    /// Increases by one with every change of the item; writes carry the version they were based on.
    public var version: Int64
    /// Path relative to the library root as the mount and exports show it: `Books/Dune - Frank Herbert.md`.
    public var path: String
    public var modified: Date
    /// The bytes the file shows: the saved bytes while they match the record (byte-stable
    /// saves), the draft's bytes while an invalid save is pending, otherwise the canonical
    /// render. Bytes, not text: a draft may be any bytes at all, NULs and broken UTF-8 included.
    public var content: Data
    /// Set while the file shows an invalid save that was kept as a draft.
    public var draftDiagnostics: [Diagnostic]?
    /// The file's mode bits as `chmod` set them.
    public var permissions: UInt32

    public init(item: Item, version: Int64, path: String, modified: Date, content: Data,
                draftDiagnostics: [Diagnostic]?, permissions: UInt32 = ItemRecord.defaultPermissions) {
        self.item = item
        self.version = version
        self.path = path
        self.modified = modified
        self.content = content
        self.draftDiagnostics = draftDiagnostics
        self.permissions = permissions
    }

    /// `rw-r--r--`, what a new file gets under the usual umask.
    public static let defaultPermissions: UInt32 = 0o644

    /// `content` decoded for display (a draft that is not UTF-8 shows U+FFFD where it breaks).
    public var text: String { String(decoding: content, as: UTF8.self) }
}

/// What listing and `stat` need, without the content.
public struct ItemSummary: Hashable, Sendable {
    public var id: ItemID
    public var kind: ItemKind
    public var title: String
    public var path: String
    public var version: Int64
    public var modified: Date
    /// Byte count of `content`; `st_size` needs no render.
    public var size: Int
    public var favorite: Bool
    public var hasDraft: Bool
    public var permissions: UInt32
    /// The item's bytes are still in the cloud: `size` is their true size, and the first read
    /// downloads them.
    public var isPlaceholder: Bool

    public init(id: ItemID, kind: ItemKind, title: String, path: String, version: Int64, modified: Date,
                size: Int, favorite: Bool, hasDraft: Bool, permissions: UInt32 = ItemRecord.defaultPermissions,
                isPlaceholder: Bool = false) {
        self.id = id
        self.kind = kind
        self.title = title
        self.path = path
        self.version = version
        self.modified = modified
        self.size = size
        self.favorite = favorite
        self.hasDraft = hasDraft
        self.permissions = permissions
        self.isPlaceholder = isPlaceholder
    }
}

/// How a version of an item came to be, and on which device (nil: this one).
public struct ChangeOrigin: Hashable, Sendable {
    public enum Reason: String, Sendable {
        /// Saved through the mount, or written by a command on this device.
        case edit
        case `import`
        /// A change made on another device, arrived through the cloud.
        case sync
        /// Two devices' edits merged.
        case merge
        /// The side of a conflict that did not win, kept as a copy.
        case conflict
        /// An earlier version brought back.
        case restore
    }

    public var reason: Reason
    public var device: String?

    public init(_ reason: Reason, device: String? = nil) {
        self.reason = reason
        self.device = device
    }

    public static let edit = ChangeOrigin(.edit)
}

/// A version of an item's file that a later change replaced, kept in the store's history.
public struct ItemVersion: Hashable, Sendable {
    public var version: Int64
    /// When that version was written.
    public var modified: Date
    public var size: Int
    /// The version was an invalid save kept as a draft.
    public var wasDraft: Bool
    /// How it came to be; nil for versions older than this record.
    public var origin: ChangeOrigin?
}

/// One entry of the change feed.
public struct Change: Hashable, Sendable {
    public enum Kind: String, Sendable, Codable { case added, updated, removed }
    /// Monotonic across the library's life; another process follows the feed by sequence.
    public var sequence: Int64
    public var kind: Kind
    public var id: ItemID
    /// The item's path after the change (for `removed`: the path it had).
    public var path: String
    /// For a move: the path it had before; nil otherwise.
    public var previousPath: String?
    /// When the change was made (nil for changes recorded before the feed kept times).
    public var time: Date?
}

/// An item in the trash.
public struct TrashedItem: Hashable, Sendable {
    public var id: ItemID
    public var kind: ItemKind
    public var title: String
    /// Where it lived, and where `restore` puts it back (with a ` (2)` suffix if taken since).
    public var originalPath: String
    public var trashedAt: Date
    /// Why Shelf put it there, when it was not a person (a repair); nil for a delete.
    public var reason: String?
}

/// A full-text search result.
public struct SearchHit: Hashable, Sendable {
    public var id: ItemID
    public var kind: ItemKind
    public var title: String
    public var path: String
    /// A short excerpt around the match, match marked with `[` `]`.
    public var snippet: String
}

/// Everything the store can refuse, each with a message that says what and how to fix it.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// The library folder does not exist (moved, deleted, unmounted disk).
    case libraryMissing(path: String)
    /// The folder exists but holds no Shelf library.
    case notALibrary(path: String)
    /// The folder or its database cannot be read or written.
    case libraryUnreadable(path: String, reason: String)
    /// Another program kept the library locked for longer than the store waits.
    case libraryBusy(path: String)
    case itemNotFound(ItemID)
    case pathTaken(String)
    /// A write based on `expected` met the item at `actual`.
    case versionConflict(id: ItemID, expected: Int64, actual: Int64)
    case invalidPath(String, reason: String)
    /// An insert met a live item with the same id (ids are unique; the file's `id:` decides).
    case itemExists(id: ItemID, path: String)
    /// An update tried to turn a book into a note or back; the kind decides the folder.
    case kindMismatch(id: ItemID, stored: ItemKind, given: ItemKind)
    /// A stored record could not be decoded (written by a newer Shelf, or damaged).
    case damagedRecord(id: ItemID, reason: String)

    public var description: String {
        switch self {
        case .libraryMissing(let path):
            "no library at \(path): the folder does not exist. Run `shelf init \(path)` to create one, or pass --library with the folder's new place."
        case .notALibrary(let path):
            "\(path) is not a Shelf library (no shelf.sqlite in it). Run `shelf init \(path)` to make it one, or pass --library with the right folder."
        case .libraryUnreadable(let path, let reason):
            "cannot open the library at \(path): \(reason). Check the folder's permissions and free space."
        case .libraryBusy(let path):
            "the library at \(path) is busy: another program (the mount, an import, the CLI) kept it locked too long. Try again when it has finished."
        case .itemNotFound(let id):
            "no item with id \(id). `shelf list` shows the ids."
        case .pathTaken(let path):
            "\(path) is already taken by another item; choose another name."
        case .versionConflict(let id, let expected, let actual):
            "item \(id) changed meanwhile (version \(actual), this write was based on \(expected)); reload and try again."
        case .invalidPath(let path, let reason):
            "\(path) is not a valid item path: \(reason)."
        case .itemExists(let id, let path):
            "an item with id \(id) already exists at \(path); give the new item another id, or update the existing one."
        case .kindMismatch(let id, let stored, let given):
            "item \(id) is a \(stored.rawValue) and cannot become a \(given.rawValue); create a new \(given.rawValue) instead."
        case .damagedRecord(let id, let reason):
            "the stored record of item \(id) cannot be read (\(reason)); it may come from a newer Shelf, or the library is damaged."
        }
    }
}
