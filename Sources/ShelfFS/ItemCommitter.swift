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
        let fileTitle = FileNaming.title(fromFileName: path.name)
        let source = Data(bytes)
        let parsed: Result<ParsedItem, ParseFailure> = if let text = String(validating: bytes, as: UTF8.self) {
            MarkdownCodec.parse(text, kind: kind, fileTitle: fileTitle)
        } else {
            .failure(ParseFailure(diagnostics: [
                Diagnostic(line: Self.firstLineNotUTF8(bytes), message: "the file is not UTF-8 text; save it as UTF-8"),
            ]))
        }
        var replaced: (version: Int64, content: Data)?
        let record = try store.write { writer -> ItemRecord in
            let record: ItemRecord
            switch (parsed, target) {
            case (.success(let parsed), .existing(let id, let base)):
                replaced = try writer.file(id: id)
                var item = parsed.item
                item.id = id
                record = try update(item, basedOn: base, source: source, modified: modified, with: writer)
            case (.failure(let failure), .existing(let id, _)):
                replaced = try writer.file(id: id)
                record = try writer.saveDraft(id: id, bytes: source, diagnostics: failure.diagnostics, modified: modified)
            case (.success(let parsed), .new(let path)):
                var item = parsed.item
                // The id of a live item elsewhere is a copy's (`cp a.md b.md`): a new item.
                if try !parsed.declaredID || writer.record(id: item.id) != nil { item.id = .generate() }
                record = try writer.insert(item, path: path.rawValue, source: source, modified: modified)
            case (.failure(let failure), .new(let path)):
                let placeholder: Item = kind == .book ? .book(Book(title: fileTitle)) : .note(Note(title: fileTitle))
                let inserted = try writer.insert(placeholder, path: path.rawValue, source: nil, modified: modified)
                record = try writer.saveDraft(id: inserted.item.id, bytes: source, diagnostics: failure.diagnostics,
                                              modified: modified)
            }
            guard let metadata else { return record }
            try writer.replaceExtendedAttributes(id: record.item.id, with: metadata.attributes)
            return try writer.setFileTimes(id: record.item.id, modified: metadata.modified,
                                           permissions: metadata.permissions)
        }
        return Outcome(record: record, replaced: replaced)
    }

    /// An editor's save is the newest word on the item. When the store moved on since the file
    /// was opened (the CLI or another mount wrote meanwhile), the save still lands, and the
    /// version it replaces is kept beside it, verbatim (a pending draft included), as
    /// `Title (conflict YYYY-MM-DD HHMMSS device).md` — never silently overwritten.
    private func update(_ item: Item, basedOn base: Int64?, source: Data, modified: Date,
                        with writer: StoreWriter) throws -> ItemRecord {
        do {
            return try writer.update(item, basedOn: base, source: source, modified: modified)
        } catch StoreError.versionConflict {
            if let other = try writer.record(id: item.id) { try keepConflictCopy(of: other, with: writer) }
            return try writer.update(item, basedOn: nil, source: source, modified: modified)
        }
    }

    /// Inserts a copy of `other` with its exact bytes under a conflict name beside it.
    private func keepConflictCopy(of other: ItemRecord, with writer: StoreWriter) throws {
        var copy = other.item
        copy.id = .generate()
        let path = try conflictPath(for: MountPath(other.path), with: writer)
        if let diagnostics = other.draftDiagnostics {
            _ = try writer.insert(copy, path: path, source: nil)
            _ = try writer.saveDraft(id: copy.id, bytes: other.content, diagnostics: diagnostics)
        } else {
            _ = try writer.insert(copy, path: path, source: other.content)
        }
    }

    /// `Stem (conflict DATE TIME device).md` beside `path`; the stem of a conflict copy is its
    /// original's, so names never nest, and a taken name gets a ` (2)`-style number.
    private func conflictPath(for path: MountPath, with writer: StoreWriter) throws -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HHmmss"
        let name = FileNaming.fileName(stem: String(Self.originalStem(of: path.name)),
                                       suffix: " (conflict \(formatter.string(from: Date())) \(device))")
        var lookupError: Error?
        let unique = FileNaming.uniqued(name) { candidate in
            do { return try writer.record(atPath: path.parent.appending(candidate).rawValue) != nil } catch {
                lookupError = error
                return false
            }
        }
        if let lookupError { throw lookupError }
        return path.parent.appending(unique).rawValue
    }

    /// The stem of `name` without `.md` and without a conflict suffix it may carry already.
    private static func originalStem(of name: String) -> Substring {
        let stem = name.dropLast(3)
        guard let range = stem.range(of: " (conflict ", options: .backwards), stem.hasSuffix(")") else { return stem }
        return stem[..<range.lowerBound]
    }

    /// The 1-based line of the first byte sequence that is not UTF-8, for the diagnostic.
    private static func firstLineNotUTF8(_ bytes: [UInt8]) -> Int {
        var line = 1
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            if String(validating: bytes[start..<index], as: UTF8.self) == nil { return line }
            line += 1
            start = index + 1
        }
        return line
    }
}
