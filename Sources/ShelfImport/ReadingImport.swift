import Foundation
import ShelfModel
import ShelfStore

/// One book as an import's source gives it — a catalogue's row, a Kindle's clippings of one
/// book, a reading app's book with its highlights — and how it changes the library's copy
/// (each kind has its field policy: a catalogue sets fields, highlights fill gaps).
protocol BookFromSource: Sendable {
    /// How the library's copy is found.
    var match: BookMatch { get }
    /// Where in the source it is, for a problem report.
    var origin: ImportProblem { get }
    /// How many of the source's entries (rows, clippings, books) it stands for: progress.
    var entries: Int { get }
    /// `book` (`isNew`: made from the match just now) with what the source says, and for
    /// sources of passages how its passages changed (nil counts the book itself).
    func applied(to book: Book, isNew: Bool) -> (book: Book, passages: PassageChanges?)
}

/// What a reader found in its source: the books, and what it skipped.
struct SourceReading<Entry: BookFromSource>: Sendable {
    var books: [Entry] = []
    /// Entries that could not be read, with where they are.
    var problems: [ImportProblem] = []
    /// Plain bookmarks (a position without text or note), which Shelf does not keep.
    var bookmarks = 0
    /// The lines of those bookmarks, for sources with lines (Kindle clippings).
    var bookmarkLines: [Int] = []
    /// Source data left out as a whole, with the reason (a column this app version lacks).
    var omissions: [String] = []
    var encoding: SourceEncoding = .utf8
}

/// Applies what a reader found to a library in one transaction: the one path every import
/// format takes into the library (Markdown folders aside, which hold items, not books).
///
/// Each book joins the library's copy its match finds — by source id, ISBN, or title and
/// author — or is created, and is changed as its source says. Importing the same source twice
/// reports every book (or passage) unchanged.
enum ReadingImport {
    static func run<Entry>(_ reading: SourceReading<Entry>, format: ImportFormat, into store: LibraryStore,
                    progress: (ImportProgress) -> Void) throws -> ImportSummary {
        let index = reading.books.isEmpty ? BookIndex() : try BookIndex(store)
        return try store.write(as: ChangeOrigin(.import)) { writer in
            var summary = ImportSummary(format: format)
            summary.encoding = reading.encoding
            summary.omissions = reading.omissions
            reading.problems.forEach { summary.skip($0) }
            summary.bookmarks = reading.bookmarks
            summary.bookmarkLines = reading.bookmarkLines
            summary.skipped += reading.bookmarks
            var books = ExistingBooks(writer: writer, index: index)
            // Skipped entries are done already.
            var done = reading.problems.count + reading.bookmarks
            let total = done + reading.books.reduce(0) { $0 + $1.entries }
            for source in reading.books {
                try books.apply(source.match, summary: &summary, at: source.origin) { source.applied(to: $0, isNew: $1) }
                done += source.entries
                progress(ImportProgress(done: done, total: total))
            }
            return summary
        }
    }
}
