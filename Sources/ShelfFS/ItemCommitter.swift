import Foundation
import ShelfModel
import ShelfMarkdown
import ShelfStore

/// Turns the bytes of a saved item file into a store write: the one place that decides which
/// item a save belongs to and whether it is a valid record or a draft.
///
/// Every save succeeds as far as the editor is concerned: text that does not parse is kept
/// verbatim as a draft (the record stays at its last good state and the error is reported out
/// of band), so an editor never loses what the user typed.
struct ItemCommitter: Sendable {
    let store: LibraryStore

    /// Where a save goes.
    enum Target: Equatable {
        /// The item at the saved path: its identity is the path's, whatever `id:` the text claims.
        case existing(ItemID, basedOn: Int64?)
        /// No item is at the path yet: the text's `id:` decides (a trashed id brings that item
        /// back; the id of a live item elsewhere makes this a copy; no id makes a new item).
        case new(at: MountPath)
    }

    /// What a save became.
    struct Outcome {
        var record: ItemRecord
        /// Whether the file now shows exactly the bytes that were written (false when Shelf had to
        /// add or change the `id:` line, so the kernel's cached pages are stale).
        var showsWrittenBytes: Bool
        /// For a save into an existing item: the bytes and version its file showed until now.
        var replaced: (version: Int64, content: String)?
    }

    /// Saves `bytes` written at `path` into `target`; `modified` is when they were written.
    func commit(_ bytes: [UInt8], at path: MountPath, into target: Target, modified: Date = Date()) throws -> Outcome {
        guard let kind = PathRules.itemKind(under: path) else {
            throw StoreError.invalidPath(path.rawValue, reason: "item files live under Books/ or Notes/")
        }
        let fileTitle = FileNaming.title(fromFileName: path.name)
        let parsed: Result<ParsedItem, ParseFailure>
        let text: String
        if let utf8 = String(validating: bytes, as: UTF8.self) {
            text = utf8
            parsed = MarkdownCodec.parse(text, kind: kind, fileTitle: fileTitle)
        } else {
            text = String(decoding: bytes, as: UTF8.self)
            parsed = .failure(ParseFailure(diagnostics: [
                Diagnostic(line: 1, message: "the file is not UTF-8 text; save it as UTF-8"),
            ]))
        }
        var replaced: (version: Int64, content: String)?
        let record = try store.write { writer -> ItemRecord in
            if case .existing(let id, _) = target { replaced = try writer.file(id: id) }
            switch (parsed, target) {
            case (.success(let parsed), .existing(let id, let base)):
                var item = parsed.item
                let keepsText = !parsed.declaredID || item.id == id
                item.id = id
                return try Self.update(item, basedOn: base, sourceText: keepsText ? text : nil, modified: modified,
                                       with: writer)
            case (.success(let parsed), .new(let path)):
                var item = parsed.item
                var sourceText: String? = text
                if !parsed.declaredID {
                    sourceText = nil  // render, so the file carries its new `id:` from now on
                } else if try writer.record(id: item.id) != nil {
                    item.id = .generate()  // a copy of a live item: a new item
                    sourceText = nil
                }
                return try writer.insert(item, path: path.rawValue, sourceText: sourceText, modified: modified)
            case (.failure(let failure), .existing(let id, _)):
                return try writer.saveDraft(id: id, text: text, diagnostics: failure.diagnostics, modified: modified)
            case (.failure(let failure), .new(let path)):
                let placeholder: Item = kind == .book ? .book(Book(title: fileTitle)) : .note(Note(title: fileTitle))
                let inserted = try writer.insert(placeholder, path: path.rawValue, sourceText: nil, modified: modified)
                return try writer.saveDraft(id: inserted.item.id, text: text, diagnostics: failure.diagnostics,
                                            modified: modified)
            }
        }
        return Outcome(record: record, showsWrittenBytes: Array(record.content.utf8) == bytes, replaced: replaced)
    }

    /// An editor's save is the newest word on the item. When the store moved on since the file
    /// was opened (the CLI or another mount wrote meanwhile), the save still lands, and the
    /// version it replaces is kept beside it as `Title (conflict YYYY-MM-DD HHMMSS host).md`
    /// — never silently overwritten, never a conflict copy of a conflict copy.
    private static func update(_ item: Item, basedOn base: Int64?, sourceText: String?, modified: Date,
                               with writer: StoreWriter) throws -> ItemRecord {
        do {
            return try writer.update(item, basedOn: base, sourceText: sourceText, modified: modified)
        } catch StoreError.versionConflict {
            if let other = try writer.record(id: item.id), !other.path.contains(" (conflict ") {
                var copy = other.item
                copy.id = .generate()
                _ = try writer.insert(copy, path: conflictPath(for: MountPath(other.path), with: writer),
                                      sourceText: nil)
            }
            return try writer.update(item, basedOn: nil, sourceText: sourceText, modified: modified)
        }
    }

    private static func conflictPath(for path: MountPath, with writer: StoreWriter) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HHmmss"
        let stem = path.name.dropLast(3)
        let name = "\(stem) (conflict \(formatter.string(from: Date())) \(ProcessInfo.processInfo.hostName)).md"
        let unique = FileNaming.uniqued(name) { candidate in
            (try? writer.record(atPath: path.parent.appending(candidate).rawValue)) != nil
        }
        return path.parent.appending(unique).rawValue
    }
}
