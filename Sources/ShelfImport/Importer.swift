import Foundation
import ShelfModel
import ShelfStore

/// What an import did. For CSV files the counts are rows (books); for Kindle clippings they
/// are passages; for the highlight sources (Kobo, KOReader, Readwise, Calibre) books and
/// passages together. `skipped` includes bookmarks, which Shelf does not keep.
public struct ImportSummary: Hashable, Sendable, CustomStringConvertible {
    /// The format the file was read as (detected when none was given).
    public var format: ImportFormat
    /// The encoding the file was read in; the summary names it when it is not UTF-8.
    public var encoding: SourceEncoding = .utf8
    public var added = 0
    public var updated = 0
    public var unchanged = 0
    public var skipped = 0
    /// Why rows were skipped, in file order.
    public var problems: [ImportProblem] = []
    /// Source data left out as a whole, with the reason (`Bookmark has no Annotation column …`).
    public var omissions: [String] = []
    /// Bookmarks met (counted in `skipped`): places without text, which Shelf does not keep.
    public var bookmarks = 0
    /// The lines of the skipped bookmarks, for sources with lines (Kindle clippings).
    public var bookmarkLines: [Int] = []
    /// Items (and plain files of an export) left as they are because they were edited in Shelf
    /// since the folder's version of them was imported or exported; paths in the library.
    public var keptEdits: [String] = []
    /// Plain files (and symlinks) of an export restored into the library: `.obsidian/`,
    /// attachments, `.git/`.
    public var otherFiles = 0

    public init(format: ImportFormat) { self.format = format }

    /// `goodreads: 5 added, 1 updated, 3 unchanged, 1 skipped` (with ` (read as Windows-1252)`
    /// for a file not in UTF-8) and one line per problem.
    public var description: String {
        let readAs = encoding == .utf8 ? "" : " (read as \(encoding.rawValue))"
        return (["\(format.rawValue): \(added) added, \(updated) updated, \(unchanged) unchanged, \(skipped) skipped\(readAs)"]
            + (otherFiles > 0 ? ["\(otherFiles) other file\(otherFiles == 1 ? "" : "s") of the export restored (folders, attachments, settings)"] : [])
            + keptEdits.map { "kept \($0): edited in Shelf since it was last imported or exported; import with --overwrite-edits to replace it" }
            + omissions + problems.map(\.description) + (bookmarks > 0 ? [bookmarkLine] : [])).joined(separator: "\n")
    }

    /// `2 bookmarks skipped (lines 12, 40): …` — why the skipped count holds them.
    private var bookmarkLine: String {
        let shown = bookmarkLines.prefix(10).map(String.init).joined(separator: ", ")
        let lines = bookmarkLines.isEmpty ? "" : " (line\(bookmarkLines.count == 1 ? "" : "s") \(shown)\(bookmarkLines.count > 10 ? ", …" : ""))"
        return "\(bookmarks) bookmark\(bookmarks == 1 ? "" : "s") skipped\(lines): a bookmark marks a place without text; Shelf keeps highlights and notes."
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
    /// Whether a Markdown folder's files replace items edited in Shelf since they were last
    /// imported (by default those edits are kept and reported).
    public var overwriteEdits: Bool
    /// Where an export's plain files are restored: a live mount of the library, so the kernel
    /// that serves it learns of them as of any file written there; nil for the library's
    /// plain-file area itself (no mount).
    public var plainFilesArea: URL?

    public init(format: ImportFormat? = nil, columnMap: ColumnMap = ColumnMap(), overwriteEdits: Bool = false,
                plainFilesArea: URL? = nil) {
        self.format = format
        self.columnMap = columnMap
        self.overwriteEdits = overwriteEdits
        self.plainFilesArea = plainFilesArea
    }

    /// Imports `file` into `store`. Throws `ImportError` when the file cannot be imported at
    /// all (nothing is written then); bad rows are skipped and listed in the summary.
    public func importFile(_ file: URL, into store: LibraryStore,
                           progress: (ImportProgress) -> Void = { _ in }) throws -> ImportSummary {
        let highlightFormat: ImportFormat? = if let format {
            Self.highlightFormats.contains(format) ? format : nil
        } else {
            HighlightSourceDetector.format(of: file)
        }
        if format == .markdown || (highlightFormat == nil && MarkdownFolderImport.isFolder(file)) {
            if let assignment = columnMap.assignments.first {
                throw ImportError.badMap(argument: "\(assignment.column)=…", reason: "Markdown files have no columns to map")
            }
            return try MarkdownFolderImport.run(folder: file, into: store, overwriteEdits: overwriteEdits,
                                                plainFilesArea: plainFilesArea ?? store.plainFilesFolder, progress: progress)
        }
        if let highlightFormat {
            if let assignment = columnMap.assignments.first {
                throw ImportError.badMap(argument: "\(assignment.column)=…", reason: "\(highlightFormat.rawValue) imports have no columns to map")
            }
            return try HighlightImport.run(try Self.read(file, as: highlightFormat), format: highlightFormat,
                                           into: store, progress: progress)
        }
        let data = try SourceText.load(file)
        if let clippings = try clippingsText(data, path: file.path) {
            if let assignment = columnMap.assignments.first {
                throw ImportError.badMap(argument: "\(assignment.column)=…", reason: "Kindle clippings have no columns to map")
            }
            return try importClippings(clippings, into: store, progress: progress)
        }
        if let kind = SourceText.binaryKind(of: data) {
            throw ImportError.notCSV(path: file.path, looksLike: kind)
        }
        let source = try SourceText(decoding: data, path: file.path)
        let text = source.text
        if let kind = SourceText.nonCSVKind(of: text) {
            throw ImportError.notCSV(path: file.path, looksLike: kind)
        }
        guard let table = CSVTable(text: text) else {
            throw ImportError.notCSV(path: file.path, looksLike: "a file without a header row")
        }
        let csvFormat = format ?? ImportFormat.detect(header: table.header, rows: table.records.prefix(50).map(\.cells))
        let decoder = try BookRowDecoder(format: csvFormat, header: table.header, userMap: columnMap)
        let rows = table.records.map { (line: $0.line, book: decoder.decode($0)) }
        let index = try BookIndex(store)
        return try store.write(as: ChangeOrigin(.import)) { writer in
            var summary = ImportSummary(format: csvFormat)
            summary.encoding = source.encoding
            var books = ExistingBooks(writer: writer, index: index)
            for (done, row) in rows.enumerated() {
                switch row.book {
                case .failure(let problem):
                    summary.skip(problem)
                case .success(let imported):
                    // Rows with ids of their own (Goodreads) find their books by that id, else by
                    // ISBN (a book a highlight import made first), never by title: two books of
                    // one name in a catalogue stay two.
                    let match = BookMatch(title: imported.title, author: imported.author, isbn: imported.isbn,
                                          sourceID: imported.sourceID, matchTitle: !imported.hasOwnID)
                    try books.apply(match, summary: &summary, at: ImportProblem(line: row.line, message: "")) { book, _ in
                        (imported.applied(to: book), nil)
                    }
                }
                progress(ImportProgress(done: done + 1, total: rows.count))
            }
            return summary
        }
    }

    /// The text of `data` when it is to be read as Kindle clippings (`--format kindle`, or
    /// clippings recognised), else nil. Kindles write UTF-8; bytes that are not — a stray
    /// UTF-16 byte order mark, NUL bytes — are damage confined to their entries, so they do
    /// not make the file "binary" and only those entries are skipped.
    private func clippingsText(_ data: Data, path: String) throws -> SourceText? {
        guard format == nil || format == .kindle else { return nil }
        let binaryKind = SourceText.binaryKind(of: data)
        if let binaryKind, binaryKind != SourceText.nulBytesKind {
            if format == .kindle { throw ImportError.notCSV(path: path, looksLike: binaryKind) }
            return nil
        }
        // A file that is whole UTF-8, or UTF-16 by its byte order mark, reads as it is.
        if binaryKind == nil, let decoded = try? SourceText(decoding: data, path: path), decoded.encoding != .windows1252,
           KindleClippings.looksLikeClippings(decoded.text) {
            return decoded
        }
        let lossy = SourceText.lossyUTF8(data)
        if KindleClippings.looksLikeClippings(lossy.text) { return lossy }
        if format == .kindle { throw ImportError.notKindleClippings(path: path) }
        return nil
    }

    /// The formats `HighlightImport` applies, each read by its own reader.
    private static let highlightFormats: Set<ImportFormat> = [.kobo, .koreader, .readwise, .calibre]

    private static func read(_ file: URL, as format: ImportFormat) throws -> SourceReading {
        switch format {
        case .kobo: try KoboReader.read(file)
        case .koreader: try KOReaderReader.read(file)
        case .calibre: try CalibreReader.read(file)
        default: try ReadwiseReader.read(file)
        }
    }

    private func importClippings(_ source: SourceText, into store: LibraryStore,
                                 progress: (ImportProgress) -> Void) throws -> ImportSummary {
        let (clippings, problems) = KindleClippings.parse(source.text, garbledLines: source.garbledLines)
        var byBook: [BookMatchKey: [KindleClipping]] = [:]
        var bookOrder: [BookMatchKey] = []
        for clipping in clippings where clipping.kind != .bookmark {
            let key = BookMatchKey(title: clipping.title, author: clipping.author)
            if byBook[key] == nil { bookOrder.append(key) }
            byBook[key, default: []].append(clipping)
        }
        let index = bookOrder.isEmpty ? BookIndex() : try BookIndex(store)
        return try store.write(as: ChangeOrigin(.import)) { writer in
            var summary = ImportSummary(format: .kindle)
            summary.encoding = source.encoding
            problems.forEach { summary.skip($0) }
            summary.bookmarkLines = clippings.filter { $0.kind == .bookmark }.map(\.line)
            summary.bookmarks = summary.bookmarkLines.count
            summary.skipped += summary.bookmarks
            var books = ExistingBooks(writer: writer, index: index)
            // Entries: clippings and unreadable ones; bookmarks and those are done already.
            let total = clippings.count + problems.count
            var done = total - bookOrder.reduce(0) { $0 + byBook[$1]!.count }
            for key in bookOrder {
                let bookClippings = byBook[key]!
                let first = bookClippings[0]
                let incoming = KindlePassages.passages(from: bookClippings)
                let match = BookMatch(title: first.title, author: first.author, isbn: nil,
                                      sourceID: DerivedSourceID.forBook(title: first.title, author: first.author), matchTitle: true)
                try books.apply(match, summary: &summary, at: ImportProblem(line: first.line, message: "")) { book, _ in
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

extension ImportSummary {
    mutating func count(_ changes: PassageChanges) {
        added += changes.added
        updated += changes.updated
        unchanged += changes.unchanged
    }
}
