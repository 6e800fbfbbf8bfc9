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
        let source = SourceFile(file)
        let highlightFormat: ImportFormat? = if let format {
            Self.highlightFormats.contains(format) ? format : nil
        } else {
            HighlightSourceDetector.format(of: source)
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
            return try ReadingImport.run(try Self.read(source, as: highlightFormat), format: highlightFormat,
                                         into: store, progress: progress)
        }
        if let clippings = try clippingsText(source) {
            if let assignment = columnMap.assignments.first {
                throw ImportError.badMap(argument: "\(assignment.column)=…", reason: "Kindle clippings have no columns to map")
            }
            return try ReadingImport.run(KindleBook.reading(of: clippings), format: .kindle, into: store, progress: progress)
        }
        let decoded = try source.text()
        let text = decoded.text
        if let kind = SourceText.nonCSVKind(of: text) {
            throw ImportError.notCSV(path: file.path, looksLike: kind)
        }
        guard let table = CSVTable(text: text) else {
            throw ImportError.notCSV(path: file.path, looksLike: "a file without a header row")
        }
        let csvFormat = format ?? ImportFormat.detect(header: table.header, rows: table.records.prefix(50).map(\.cells))
        let decoder = try BookRowDecoder(format: csvFormat, header: table.header, userMap: columnMap)
        var reading = SourceReading<CatalogueRow>(encoding: decoded.encoding)
        for record in table.records {
            switch decoder.decode(record) {
            case .success(let row): reading.books.append(row)
            case .failure(let problem): reading.problems.append(problem)
            }
        }
        return try ReadingImport.run(reading, format: csvFormat, into: store, progress: progress)
    }

    /// The text of `data` when it is to be read as Kindle clippings (`--format kindle`, or
    /// clippings recognised), else nil. Kindles write UTF-8; bytes that are not — a stray
    /// UTF-16 byte order mark, NUL bytes — are damage confined to their entries, so they do
    /// not make the file "binary" and only those entries are skipped.
    private func clippingsText(_ file: SourceFile) throws -> SourceText? {
        guard format == nil || format == .kindle else { return nil }
        let (data, path) = (try file.data(), file.path)
        let binaryKind = SourceText.binaryKind(of: data)
        if let binaryKind, binaryKind != SourceText.nulBytesKind {
            if format == .kindle { throw ImportError.notCSV(path: path, looksLike: binaryKind) }
            return nil
        }
        // A file that is whole UTF-8, or UTF-16 by its byte order mark, reads as it is.
        if binaryKind == nil, let decoded = try? file.text(), decoded.encoding != .windows1252,
           KindleClippings.looksLikeClippings(decoded.text) {
            return decoded
        }
        let lossy = SourceText.lossyUTF8(data)
        if KindleClippings.looksLikeClippings(lossy.text) { return lossy }
        if format == .kindle { throw ImportError.notKindleClippings(path: path) }
        return nil
    }

    /// The highlight sources, each read by its own reader.
    private static let highlightFormats: Set<ImportFormat> = [.kobo, .koreader, .readwise, .calibre]

    private static func read(_ file: SourceFile, as format: ImportFormat) throws -> SourceReading<SourceBook> {
        switch format {
        case .kobo: try KoboReader.read(file.url)
        case .koreader: try KOReaderReader.read(file)
        case .calibre: try CalibreReader.read(file.url)
        default: try ReadwiseReader.read(file)
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
