import Foundation
import ShelfModel
import ShelfStore

/// What an import did. For CSV files the counts are rows (books); for Kindle clippings they
/// are passages, and `skipped` includes bookmarks, which Shelf does not keep.
public struct ImportSummary: Hashable, Sendable, CustomStringConvertible {
    /// The format the file was read as (detected when none was given).
    public var format: ImportFormat
    public var added = 0
    public var updated = 0
    public var unchanged = 0
    public var skipped = 0
    /// Why rows were skipped, in file order.
    public var problems: [ImportProblem] = []

    public init(format: ImportFormat) { self.format = format }

    /// `goodreads: 5 added, 1 updated, 3 unchanged, 1 skipped` and one line per problem.
    public var description: String {
        (["\(format.rawValue): \(added) added, \(updated) updated, \(unchanged) unchanged, \(skipped) skipped"]
            + problems.map(\.description)).joined(separator: "\n")
    }
}

/// How far an import is: rows (or clippings) applied out of all of them.
public struct ImportProgress: Hashable, Sendable {
    public var done: Int
    public var total: Int
}

/// Reads an export file and applies it to a library in one transaction: either every good row
/// is applied or (when the store fails) none is.
///
/// Books are found again by their source id (`goodreads:123`), and books from sources without
/// ids by title and author, so importing a file again updates in place and never duplicates.
/// Only what the file says changes; passages, free text and properties added in Shelf stay.
public struct Importer: Sendable {
    /// The file's format; nil detects it from the header row or the content.
    public var format: ImportFormat?
    /// The user's `--map` assignments, over the format's own.
    public var columnMap: ColumnMap

    public init(format: ImportFormat? = nil, columnMap: ColumnMap = ColumnMap()) {
        self.format = format
        self.columnMap = columnMap
    }

    /// Imports `file` into `store`. Throws `ImportError` when the file cannot be imported at
    /// all (nothing is written then); bad rows are skipped and listed in the summary.
    public func importFile(_ file: URL, into store: LibraryStore,
                           progress: (ImportProgress) -> Void = { _ in }) throws -> ImportSummary {
        if format == .markdown || MarkdownFolderImport.isFolder(file) {
            if let assignment = columnMap.assignments.first {
                throw ImportError.badMap(argument: "\(assignment.column)=…", reason: "Markdown files have no columns to map")
            }
            return try MarkdownFolderImport.run(folder: file, into: store, progress: progress)
        }
        let text = try SourceText.load(file)
        let isKindle = format.map { $0 == .kindle } ?? KindleClippings.looksLikeClippings(text)
        if isKindle {
            guard KindleClippings.looksLikeClippings(text) else { throw ImportError.notKindleClippings(path: file.path) }
            if let assignment = columnMap.assignments.first {
                throw ImportError.badMap(argument: "\(assignment.column)=…", reason: "Kindle clippings have no columns to map")
            }
            return try importClippings(text, into: store, progress: progress)
        }
        if let kind = SourceText.nonCSVKind(of: text) {
            throw ImportError.notCSV(path: file.path, looksLike: kind)
        }
        guard let table = CSVTable(text: text) else {
            throw ImportError.notCSV(path: file.path, looksLike: "a file without a header row")
        }
        let csvFormat = format ?? ImportFormat.detect(header: table.header, rows: table.records.prefix(50).map(\.cells))
        let decoder = try BookRowDecoder(format: csvFormat, header: table.header, userMap: columnMap)
        let rows = table.records.map { (line: $0.line, book: decoder.decode($0)) }
        let titleIndex = rows.contains { (try? $0.book.get().hasOwnID) == false } ? try BookTitleIndex(store) : BookTitleIndex()
        return try store.write(as: ChangeOrigin(.import)) { writer in
            var summary = ImportSummary(format: csvFormat)
            var books = ExistingBooks(writer: writer, byTitle: titleIndex)
            for (done, row) in rows.enumerated() {
                switch row.book {
                case .failure(let problem):
                    summary.skip(problem)
                case .success(let imported):
                    try books.apply(imported.title, author: imported.author, sourceID: imported.sourceID,
                                    matchTitle: !imported.hasOwnID, summary: &summary, line: row.line) { book in
                        (imported.applied(to: book), nil)
                    }
                }
                progress(ImportProgress(done: done + 1, total: rows.count))
            }
            return summary
        }
    }

    private func importClippings(_ text: String, into store: LibraryStore,
                                 progress: (ImportProgress) -> Void) throws -> ImportSummary {
        let (clippings, problems) = KindleClippings.parse(text)
        var byBook: [BookMatchKey: [KindleClipping]] = [:]
        var bookOrder: [BookMatchKey] = []
        for clipping in clippings where clipping.kind != .bookmark {
            let key = BookMatchKey(title: clipping.title, author: clipping.author)
            if byBook[key] == nil { bookOrder.append(key) }
            byBook[key, default: []].append(clipping)
        }
        let titleIndex = bookOrder.isEmpty ? BookTitleIndex() : try BookTitleIndex(store)
        return try store.write(as: ChangeOrigin(.import)) { writer in
            var summary = ImportSummary(format: .kindle)
            problems.forEach { summary.skip($0) }
            summary.skipped += clippings.count(where: { $0.kind == .bookmark })
            var books = ExistingBooks(writer: writer, byTitle: titleIndex)
            // Entries: clippings and unreadable ones; bookmarks and those are done already.
            let total = clippings.count + problems.count
            var done = total - bookOrder.reduce(0) { $0 + byBook[$1]!.count }
            for key in bookOrder {
                let bookClippings = byBook[key]!
                let first = bookClippings[0]
                let incoming = KindlePassages.passages(from: bookClippings)
                try books.apply(first.title, author: first.author,
                                sourceID: DerivedSourceID.forBook(title: first.title, author: first.author),
                                matchTitle: true, summary: &summary, line: first.line) { book in
                    var book = book
                    let merged = KindlePassages.merge(incoming, into: book.passages)
                    book.passages = merged.passages
                    return (book, merged.changes)
                }
                done += bookClippings.count
                progress(ImportProgress(done: done, total: total))
            }
            return summary
        }
    }
}

extension ImportSummary {
    mutating func skip(_ problem: ImportProblem) {
        skipped += 1
        problems.append(problem)
    }
}

/// Live books by title and author, for rows from sources without ids. Read before the import's
/// transaction (the store allows no other access inside it); the transaction re-reads every
/// book it finds here, so a book deleted meanwhile is simply created again.
struct BookTitleIndex {
    fileprivate var ids: [BookMatchKey: ItemID] = [:]

    init() {}

    init(_ store: LibraryStore) throws {
        for summary in try store.summaries(kind: .book) {
            if case .book(let book)? = try store.record(id: summary.id)?.item {
                ids[BookMatchKey(title: book.title, author: book.author)] = book.id
            }
        }
    }
}

/// Finds the books an import writes to, inside its transaction.
private struct ExistingBooks {
    let writer: StoreWriter
    var byTitle: BookTitleIndex

    /// Changes the book `sourceID` (or, with `matchTitle`, `title` and `author`) names by
    /// `change`, or creates it from a new book, and counts the outcome in `summary`. `change`
    /// returns the book to store and, for passage imports, the per-passage counts.
    mutating func apply(_ title: String, author: String?, sourceID: String, matchTitle: Bool,
                        summary: inout ImportSummary, line: Int,
                        change: (Book) -> (Book, PassageChanges?)) throws {
        let key = BookMatchKey(title: title, author: author)
        let id = try writer.bookID(sourceID: sourceID) ?? (matchTitle ? byTitle.ids[key] : nil)
        guard let id, let record = try writer.record(id: id), case .book(let stored) = record.item else {
            let (book, passages) = change(Book(title: title, author: author, sourceID: sourceID))
            _ = try writer.insert(.book(book), path: nil, source: nil)
            byTitle.ids[key] = book.id
            summary.count(passages ?? PassageChanges(added: 1))
            return
        }
        let (book, passages) = change(stored)
        guard book != stored else {
            summary.count(passages ?? PassageChanges(unchanged: 1))
            return
        }
        guard record.draftDiagnostics == nil else {
            summary.skip(ImportProblem(line: line, message: "\(record.path) holds an invalid edit that is not saved yet; fix or undo it in the file, then import again"))
            return
        }
        _ = try writer.update(.book(book), basedOn: record.version, source: nil)
        summary.count(passages ?? PassageChanges(updated: 1))
    }
}

extension ImportSummary {
    fileprivate mutating func count(_ changes: PassageChanges) {
        added += changes.added
        updated += changes.updated
        unchanged += changes.unchanged
    }
}
