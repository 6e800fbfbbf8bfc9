import Foundation
import ShelfModel
import ShelfMarkdown
import ShelfStore

/// Turns the bytes of a saved item file into a store write: the one place that decides which
/// item a save belongs to and whether it is a valid record or a draft.
///
/// Every save succeeds as far as the editor is concerned, and the file shows exactly the bytes
/// written from then on: a text that parses updates the record and is kept as its source, one
/// that does not (broken YAML, bytes that are not UTF-8) is kept verbatim as a draft while the
/// record stays at its last good state. Shelf writes into a file's bytes only when it renders
/// the file itself, for changes made elsewhere.
struct ItemCommitter: Sendable {
    let store: LibraryStore
    /// Names conflict copies (`Title (conflict … device).md`).
    let device: String

    init(store: LibraryStore, device: String = ProcessInfo.processInfo.hostName) {
        self.store = store
        self.device = device
    }

    /// Where a save goes.
    enum Target: Equatable {
        /// The item at the saved path: its identity is the path's, whatever `id:` the text claims.
        case existing(ItemID, basedOn: Int64?)
        /// No item is at the path yet: the text's `id:` decides (a trashed id brings that item
        /// back; the id of a live item elsewhere is a copy's, so this is a new item; no id makes
        /// a new item). The id of a new item lives in the store and `user.shelf.id`, not in
        /// bytes nobody wrote.
        case new(at: MountPath)
    }

    /// What a save became.
    struct Outcome {
        var record: ItemRecord
        /// For a save into an existing item: the bytes and version its file showed until now.
        var replaced: (version: Int64, content: Data)?
    }

    /// What a file brings besides its bytes when it is renamed over an item (rsync and `cp -p`
    /// set them on a temp file first): they become the item's, as the inode's would on disk.
    struct FileMetadata: Equatable {
        var modified: Date
        var permissions: UInt32
        /// `user.*` extended attributes, `user.shelf.*` excluded (those describe the record).
        var attributes: [String: Data]
    }

    /// Saves `bytes` written at `path` into `target`; `modified` is when they were written.
    /// `metadata`: the times, mode and attributes the item's file takes on, whether or not its
    /// bytes changed.
    func commit(_ bytes: [UInt8], at path: MountPath, into target: Target, modified: Date = Date(),
                carrying metadata: FileMetadata? = nil) throws -> Outcome {
        guard let kind = PathRules.itemKind(under: path) else {
            throw StoreError.invalidPath(path.rawValue, reason: "item files live under Books/ or Notes/")
        }
        let source = Data(bytes)
        var replaced: (version: Int64, content: Data)?
        let record = try store.write { writer -> ItemRecord in
            let record: ItemRecord
            switch target {
            case .existing(let id, let base):
                replaced = try writer.file(id: id)
                record = try save(source, of: id, kind: kind, at: path, basedOn: base, modified: modified, with: writer)
            case .new(let path):
                record = try writer.saveFile(source, of: try newItemID(for: source, kind: kind, with: writer), kind: kind,
                                             at: path.rawValue, basedOn: nil, modified: modified)
            }
            guard let metadata else { return record }
            try writer.replaceExtendedAttributes(id: record.item.id, with: metadata.attributes)
            return try writer.setFileTimes(of: record, modified: metadata.modified,
                                           permissions: metadata.permissions)
        }
        return Outcome(record: record, replaced: replaced)
    }

    /// The id a new file's item gets: the one its text declares when that names no live item
    /// (a trashed id brings that item back), else a fresh one — the id of a live item elsewhere
    /// is a copy's (`cp a.md b.md`), and a file without `id:` is a new item.
    private func newItemID(for source: Data, kind: ItemKind, with writer: StoreWriter) throws -> ItemID {
        guard case .success(let parsed) = MarkdownCodec.parse(bytes: source, kind: kind, fileTitle: nil),
              parsed.declaredID, try writer.record(id: parsed.item.id) == nil else { return .generate() }
        return parsed.item.id
    }

    /// An editor's save is the newest word on the item. When the store moved on since the file
    /// was opened (the CLI or another mount wrote meanwhile), the save still lands, and the
    /// version it replaces is kept beside it, verbatim (a pending draft included), as
    /// `Title (conflict YYYY-MM-DD HHMMSS device).md` — never silently overwritten.
    private func save(_ source: Data, of id: ItemID, kind: ItemKind, at path: MountPath, basedOn base: Int64?,
                      modified: Date, with writer: StoreWriter) throws -> ItemRecord {
        do {
            return try writer.saveFile(source, of: id, kind: kind, at: path.rawValue, basedOn: base, modified: modified)
        } catch StoreError.versionConflict {
            if let other = try writer.record(id: id) {
                _ = try writer.saveConflictCopy(other.content, kind: kind, beside: other.path, time: Date(), device: device)
            }
            return try writer.saveFile(source, of: id, kind: kind, at: path.rawValue, basedOn: nil, modified: modified)
        }
    }
}
