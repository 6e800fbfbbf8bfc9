import Foundation
import ShelfModel
import ShelfStore

/// Applies what a highlight reader found to a library in one transaction.
///
/// Each book joins the library's copy found by its source id, ISBN, or title and author
/// (created when there is none), takes the source's status and progress, and merges its
/// highlights (`PassageMerge`). The summary counts books and passages together, so importing
/// the same source twice reports every one of them unchanged.
enum HighlightImport {
    static func run(_ reading: SourceReading, format: ImportFormat, into store: LibraryStore,
                    progress: (ImportProgress) -> Void) throws -> ImportSummary {
        let index = reading.books.isEmpty ? BookIndex() : try BookIndex(store)
        return try store.write(as: ChangeOrigin(.import)) { writer in
            var summary = ImportSummary(format: format)
            summary.encoding = reading.encoding
            summary.omissions = reading.omissions
            reading.problems.forEach { summary.skip($0) }
            summary.bookmarks = reading.bookmarks
            summary.skipped += reading.bookmarks
            var books = ExistingBooks(writer: writer, index: index)
            for (done, source) in reading.books.enumerated() {
                try books.apply(source.match, summary: &summary, at: source.origin) { stored, isNew in
                    var book = source.applied(to: stored)
                    let bookChanged = book != stored
                    let merged = PassageMerge.merge(source.passages, into: book.passages)
                    book.passages = merged.passages
                    var changes = merged.changes
                    if isNew { changes.added += 1 } else if bookChanged { changes.updated += 1 } else { changes.unchanged += 1 }
                    return (book, changes)
                }
                progress(ImportProgress(done: done + 1, total: reading.books.count))
            }
            return summary
        }
    }
}
