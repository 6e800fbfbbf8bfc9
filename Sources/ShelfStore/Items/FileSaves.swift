import Foundation
import ShelfModel
import ShelfMarkdown
import GRDB

extension StoreWriter {
    /// Stores `bytes` as the whole file of item `id`, the one rule for every file that arrives
    /// as bytes (a save through the mount, a change from the cloud): bytes that parse become
    /// the record, with the bytes kept as its source; bytes that do not are kept verbatim as a
    /// draft while the record stays at its last good state. The id is the caller's decision,
    /// whatever `id:` the bytes declare.
    ///
    /// An item that is not live is created at `path` (a trashed one comes back with its
    /// history); a placeholder becomes a downloaded file. `basedOn`: as for `update`, for an
    /// item that exists.
    public func saveFile(_ bytes: Data, of id: ItemID, kind: ItemKind, at path: String, basedOn version: Int64?,
                         modified: Date) throws -> ItemRecord {
        let fileTitle = FileNaming.title(fromFileName: String(ItemPath.fileName(of: path)))
        let parsed = MarkdownCodec.parse(bytes: bytes, kind: kind, fileTitle: fileTitle)
        let exists = try queries.presence(of: id) == .live
        // Whole bytes make any placeholder of the item a downloaded file.
        try db.cachedStatement(sql: "DELETE FROM item_download WHERE item_id = ?").execute(arguments: [id.rawValue])
        switch parsed {
        case .success(var parsed):
            parsed.item.id = id
            if exists, case .book(var book) = parsed.item, let stored = try bookWithUnrenderedFields(id) {
                book.keepUnrenderedFields(of: stored)
                parsed.item = .book(book)
            }
            return exists ? try update(parsed.item, basedOn: version, source: bytes, modified: modified)
                          : try insert(parsed.item, path: path, source: bytes, modified: modified)
        case .failure(let failure):
            if !exists {
                var stand: Item = kind == .book ? .book(Book(title: fileTitle)) : .note(Note(title: fileTitle))
                stand.id = id
                _ = try insert(stand, path: path, source: nil, modified: modified)
            }
            return try saveDraft(id: id, bytes: bytes, diagnostics: failure.diagnostics, modified: modified)
        }
    }

    /// The stored book `id` if its passages may carry fields its file does not show (colors,
    /// sources from an import). Most books have none, which their encoded record tells
    /// without the cost of decoding it.
    private func bookWithUnrenderedFields(_ id: ItemID) throws -> Book? {
        guard let row = try queries.storedRow(id: id), RecordCoding.mayHoldUnrenderedFields(row.encodedRecord),
              case .book(let book) = try coding.decodeItem(row.encodedRecord, id: id) else { return nil }
        return book
    }

    /// Keeps `bytes` verbatim as a new item `id` named as a conflict copy of the file at `path`
    /// (`Title (conflict YYYY-MM-DD HHMMSS device).md` beside it, numbered if taken), made at
    /// `time` on `device`: the side of a conflict that did not win, never lost. `tag` makes the
    /// name one no other copy has, for a copy every device makes alike.
    public func saveConflictCopy(_ bytes: Data, id: ItemID = .generate(), kind: ItemKind, beside path: String,
                                 time: Date, device: String, tag: String? = nil) throws -> ItemRecord {
        let name = FileNaming.conflictCopyName(of: String(ItemPath.fileName(of: path)), time: time, device: device, tag: tag)
        let copyPath = try freePath(near: ItemPath.folder(of: path) + "/" + name)
        return try with(ChangeOrigin(.conflict, device: device)) {
            try saveFile(bytes, of: id, kind: kind, at: copyPath, basedOn: nil, modified: time)
        }
    }

    /// Moves to the trash the conflict copies beside `path` that still hold exactly `bytes`: a
    /// save made from those bytes continues the line they lost on, and only a line's newest
    /// edit is kept aside. A copy edited since is the user's, and stays. Returns the copies'
    /// paths.
    @discardableResult
    public func retireConflictCopies(holding bytes: Data, beside path: String) throws -> [String] {
        let prefix = ItemPath.folder(of: path) + "/" + FileNaming.conflictCopyPrefix(of: String(ItemPath.fileName(of: path)))
        let copies = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT id, path FROM item WHERE trashed_at IS NULL AND path >= ? AND path < ? AND size = ? AND content = ?
            """), arguments: [prefix, prefix + "\u{10FFFF}", bytes.count, bytes])
        for copy in copies {
            try trash(id: ItemID(rawValue: copy[ItemColumns.id]), reason: "superseded: a later save continued what it kept aside")
        }
        return copies.map { $0[ItemColumns.path] }
    }
}
