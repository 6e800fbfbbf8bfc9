import Foundation
import ShelfModel
import ShelfStore

/// How an imported book is looked for among the books already in the library.
struct BookMatch {
    var title: String
    var author: String?
    /// Looked up before title and author.
    var isbn: String?
    /// The key that finds the book again on the next import of the same source.
    var sourceID: String
    /// Whether to look by title and author too (sources without ids of their own, and
    /// highlight sources that join books a catalogue import made).
    var matchTitle: Bool
}

/// Live books by ISBN and by title and author, for imports that join books other sources made.
/// Read before the import's transaction (the store allows no other access inside it); the
/// transaction re-reads every book it finds here, so a book deleted meanwhile is simply created again.
struct BookIndex {
    private var byTitle: [BookMatchKey: ItemID] = [:]
    private var byISBN: [String: ItemID] = [:]

    init() {}

    init(_ store: LibraryStore) throws {
        for summary in try store.summaries(kind: .book) {
            if case .book(let book)? = try store.record(id: summary.id)?.item { add(book) }
        }
    }

    /// Indexes `book` by ISBN and by its title with its author, and with its first author
    /// alone when it has several (Goodreads names only the first), without displacing an
    /// exact entry of another book.
    mutating func add(_ book: Book) {
        if let isbn = book.isbn.flatMap(Self.isbnKey) { byISBN[isbn] = book.id }
        byTitle[BookMatchKey(title: book.title, author: book.author)] = book.id
        if let first = book.author.flatMap(AuthorList.first(of:)) {
            let key = BookMatchKey(title: book.title, author: first)
            if byTitle[key] == nil { byTitle[key] = book.id }
        }
    }

    /// The book `match` names by ISBN, else (when it matches by title) by title and author,
    /// else by title and its first author.
    func find(_ match: BookMatch) -> ItemID? {
        if let isbn = match.isbn.flatMap(Self.isbnKey), let id = byISBN[isbn] { return id }
        guard match.matchTitle else { return nil }
        return byTitle[BookMatchKey(title: match.title, author: match.author)]
            ?? match.author.flatMap(AuthorList.first(of:)).flatMap { byTitle[BookMatchKey(title: match.title, author: $0)] }
    }

    /// An ISBN as its ISBN-13 digits, so a source's ISBN-10 finds a catalogue's ISBN-13.
    static func isbnKey(_ text: String) -> String? {
        guard let isbn = CellValues.isbn(text) else { return nil }
        guard isbn.count == 10 else { return isbn }
        let digits = Array("978" + isbn.dropLast()).map { Int(String($0))! }
        let sum = digits.enumerated().reduce(0) { $0 + $1.element * ($1.offset % 2 == 0 ? 1 : 3) }
        return digits.map(String.init).joined() + String((10 - sum % 10) % 10)
    }
}

/// Author fields that name several people: `A; B` (Kindle), `A & B` (Calibre), `A and B`,
/// `A, B` (Kobo, Readwise), one per line (KOReader).
enum AuthorList {
    /// The first of several authors, or nil for one author. `Herbert, Frank` is one author.
    static func first(of author: String) -> String? {
        for separator in ["; ", " & ", " and ", "\n"] {
            if let range = author.range(of: separator) { return author[..<range.lowerBound].trimmed() }
        }
        let parts = author.split(separator: ",").map { $0.trimmed() }
        guard parts.count >= 2, parts.allSatisfy({ $0.contains(" ") }) else { return nil }
        return parts[0]
    }
}

/// Finds the books an import writes to, inside its transaction.
struct ExistingBooks {
    let writer: StoreWriter
    var index: BookIndex

    init(writer: StoreWriter, index: BookIndex) {
        self.writer = writer
        self.index = index
    }

    /// Changes the book `match` finds (by source id, ISBN, then title and author) by `change`,
    /// or creates it from a new book, and counts the outcome in `summary`. `change` gets the
    /// book and whether it is new, and returns the book to store and, for passage imports,
    /// the counts. `origin` says where in the source the book is, for a problem report.
    mutating func apply(_ match: BookMatch, summary: inout ImportSummary, at origin: ImportProblem,
                        change: (Book, Bool) -> (Book, PassageChanges?)) throws {
        let id = try writer.bookID(sourceID: match.sourceID) ?? index.find(match)
        guard let id, let record = try writer.record(id: id), case .book(let stored) = record.item else {
            let (book, passages) = change(Book(title: match.title, author: match.author, sourceID: match.sourceID), true)
            _ = try writer.insert(.book(book), path: nil, source: nil)
            index.add(book)
            summary.count(passages ?? PassageChanges(added: 1))
            return
        }
        let (book, passages) = change(stored, false)
        guard book != stored else {
            summary.count(passages ?? PassageChanges(unchanged: 1))
            return
        }
        guard record.draftDiagnostics == nil else {
            var problem = origin
            problem.message = "\(record.path) holds an invalid edit that is not saved yet; fix or undo it in the file, then import again"
            summary.skip(problem)
            return
        }
        _ = try writer.update(.book(book), basedOn: record.version, source: nil)
        summary.count(passages ?? PassageChanges(updated: 1))
    }
}
