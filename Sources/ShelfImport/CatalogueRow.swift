import Foundation
import ShelfModel

/// What one row of a catalogue export (Goodreads, StoryGraph, a spreadsheet) says about a
/// book: the fields it sets and the columns it keeps.
///
/// A field left nil (an empty cell) is not "cleared" on re-import: an import only changes what
/// its file actually says, so values the user entered in Shelf since the last import survive.
struct CatalogueRow: BookFromSource, Hashable {
    /// The row's line in the file.
    var line: Int
    /// The key that finds this book again on the next import of the same file.
    var sourceID: String
    /// Whether `sourceID` is the export's own id (`goodreads:123`) rather than derived from
    /// title and author; books without one are also matched by title and author.
    var hasOwnID: Bool
    var title: String
    var author: String?
    var isbn: String?
    /// Its properties are the columns with no field of their own, in column order.
    var reading = ImportedReading()

    /// Rows with ids of their own (Goodreads) find their books by that id, else by ISBN (a
    /// book a highlight import made first), never by title: two books of one name in a
    /// catalogue stay two.
    var match: BookMatch {
        BookMatch(title: title, author: author, isbn: isbn, sourceID: sourceID, matchTitle: !hasOwnID)
    }

    var origin: ImportProblem { ImportProblem(line: line, message: "") }

    var entries: Int { 1 }

    /// `book` with the row's values written over the imported fields. Everything else — the
    /// passages, introduction, appendix, properties the user added, fields the row leaves
    /// empty — stays as it is. Tags are merged, since the user may have tagged it in Shelf.
    func applied(to book: Book, isNew: Bool) -> (book: Book, passages: PassageChanges?) {
        var book = book
        book.title = title
        book.sourceID = book.sourceID ?? sourceID
        if let author { book.author = author }
        if let isbn { book.isbn = isbn }
        book.takeReading(reading)
        return (book, nil)
    }
}

/// What an import says about reading a book. A catalogue row and a reading app's book both
/// carry it, and both hand it to the library's copy alike (``Book/takeReading(_:)``).
struct ImportedReading: Hashable, Sendable {
    var status: ReadingStatus?
    var currentPage: Int?
    var totalPages: Int?
    /// 0.5 to 5.
    var rating: Double?
    var dateAdded: CalendarDate?
    var dateFinished: CalendarDate?
    var tags: [String] = []
    /// What the source says that has no field of its own, as frontmatter properties.
    var properties: [Property] = []
}

extension Book {
    /// Each value `reading` has replaces the book's, its tags are added to the book's (the
    /// user may have tagged it in Shelf), its properties set.
    mutating func takeReading(_ reading: ImportedReading) {
        if let status = reading.status { self.status = status }
        if let currentPage = reading.currentPage { self.currentPage = currentPage }
        if let totalPages = reading.totalPages { self.totalPages = totalPages }
        if let rating = reading.rating { self.rating = rating }
        if let dateAdded = reading.dateAdded { self.dateAdded = dateAdded }
        if let dateFinished = reading.dateFinished { self.dateFinished = dateFinished }
        tags += reading.tags.filter { !tags.contains($0) }
        setProperties(reading.properties)
    }

    /// Sets each of `properties` in place, or appends it; other properties stay.
    mutating func setProperties(_ properties: [Property]) {
        for property in properties {
            if let index = extraProperties.firstIndex(where: { $0.key == property.key }) {
                extraProperties[index].value = property.value
            } else {
                extraProperties.append(property)
            }
        }
    }
}

/// Identities for imported books that carry no id of their own (StoryGraph, Notion, Kindle).
enum DerivedSourceID {
    /// `title-author:` and a hash of the normalised title and author: the same book gets the
    /// same id in every import from every source without ids, so they all land in one book.
    static func forBook(title: String, author: String?) -> String {
        "title-author:" + String(StableHash.fnv1a64(BookMatchKey(title: title, author: author).text), radix: 16)
    }
}

/// Title and author compared the way people consider them equal: case, accents' composition
/// and runs of spaces do not matter.
struct BookMatchKey: Hashable, Sendable {
    let text: String

    /// Sources name one book differently: Goodreads appends the series (`Dune (Dune, #1)`),
    /// Kindles sometimes write the author `Herbert, Frank`. Both are folded away, with case,
    /// Unicode form and spacing, so highlights find the book a catalogue import created.
    init(title: String, author: String?) {
        text = Self.normalized(Self.withoutSeries(title)) + "\u{1F}" + Self.normalized(Self.firstNameFirst(author ?? ""))
    }

    private static func normalized(_ text: String) -> String {
        text.precomposedStringWithCanonicalMapping.lowercased()
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// `Dune (Dune, #1)` → `Dune`; a parenthesised ending without `#` is part of the title.
    private static func withoutSeries(_ title: String) -> String {
        guard title.hasSuffix(")"), let open = title.lastIndex(of: "("),
              title[open...].contains("#"), open > title.startIndex else { return title }
        return String(title[..<open])
    }

    /// `Herbert, Frank` → `Frank Herbert`; several authors (`A, B and C`) are left alone.
    private static func firstNameFirst(_ author: String) -> String {
        let parts = author.split(separator: ",").map { $0.trimmed() }
        guard parts.count == 2, !parts[1].contains(" and "), !parts[1].isEmpty else { return author }
        return parts[1] + " " + parts[0]
    }
}

/// A hash that, unlike `Hasher`, is the same in every process: derived ids and the export
/// manifest are compared across runs. Not for security.
enum StableHash {
    static func fnv1a64<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        bytes.reduce(0xcbf2_9ce4_8422_2325 as UInt64) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    }

    static func fnv1a64(_ text: String) -> UInt64 { fnv1a64(text.utf8) }
}
