import Foundation
import ShelfModel

/// One book as a reading app describes it, with its highlights: what each highlight reader
/// (Kobo, KOReader, Readwise, Calibre) produces. It fills the library's copy's gaps and takes
/// the app's latest word on reading; its highlights merge into the book's (``PassageMatcher``).
struct SourceBook: BookFromSource {
    var title: String
    /// In the source's order.
    var authors: [String] = []
    var isbn: String?
    /// The source's own id for the book (`kobo:<ContentID>`); nil derives one from title and author.
    var ownID: String?
    var reading = ImportedReading()
    /// A description in Markdown, for the book's free text when it has none.
    var description: String?
    var passages: [SourcePassage] = []
    /// Where the source describes the book, for problem reports.
    var origin: ImportProblem

    /// The authors as one field: `Andrew Hunt, David Thomas`.
    var author: String? { authors.isEmpty ? nil : authors.joined(separator: ", ") }

    var match: BookMatch {
        BookMatch(title: title, author: author, isbn: isbn,
                  sourceID: ownID ?? DerivedSourceID.forBook(title: title, author: author), matchTitle: true)
    }

    var entries: Int { 1 }

    /// `stored` with what the source says about the book itself — the title stays (a
    /// catalogue import may have named it better); author and ISBN fill only what is missing;
    /// status and progress are the source's latest word — and its highlights merged in. The
    /// book counts among the passages.
    func applied(to stored: Book, isNew: Bool) -> (book: Book, passages: PassageChanges?) {
        var book = stored
        book.sourceID = book.sourceID ?? match.sourceID
        if book.author == nil { book.author = author }
        if book.isbn == nil { book.isbn = isbn }
        book.takeReading(reading)
        if book.introduction.isEmpty, let description { book.introduction = description + "\n\n" }
        let bookChanged = book != stored
        let merged = PassageMatcher.merge(passages, into: book.passages, extendsByLongerEntries: false)
        book.passages = merged.passages
        var changes = merged.changes
        if isNew { changes.added += 1 } else if bookChanged { changes.updated += 1 } else { changes.unchanged += 1 }
        return (book, changes)
    }
}

/// One highlight (or note) as the source gives it.
struct SourcePassage: Sendable {
    /// The source's key for it, with the format's prefix (`kobo:<BookmarkID>`).
    var key: String
    /// The highlighted text; empty for a note made without a highlight.
    var text: String
    var note: String?
    var page: Int?
    var location: String?
    var chapter: String?
    var tags: [String] = []
    var color: String?
    var dateAdded: CalendarDate?

    /// A key for a highlight the source gives no id for: `<format>:` and the hexadecimal FNV-1a
    /// hash of the book, the `place` where it tells highlights apart, and the normalised text (a
    /// note made without a highlight: `note ` and its note). The same highlight in a later
    /// export gets the same key, so the key must never change between Shelf versions.
    static func derivedKey(_ format: String, book: BookMatchKey, place: String? = nil, text: String, note: String?) -> String {
        let content = HighlightText.normalized(text.isEmpty ? "note " + (note ?? "") : text)
        let identity = ([book.text] + (place.map { [$0] } ?? []) + [content]).joined(separator: "\u{1F}")
        return format + ":" + String(StableHash.fnv1a64(identity), radix: 16)
    }

    /// The passage with `\r\n` and `\r` in its text, note and chapter as `\n`: a passage is
    /// written one `> ` line per line, and a CR would stay inside a line (CSV cells keep CRLF).
    func withUnixLineBreaks() -> SourcePassage {
        func unix(_ text: String) -> String {
            text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
        }
        var passage = self
        passage.text = unix(text)
        passage.note = note.map(unix)
        passage.chapter = chapter.map(unix)
        return passage
    }
}
