import ShelfModel

/// One book's clippings from a Kindle, in file order: their passages (``KindlePassages``) merge
/// into the book's (``PassageMatcher``); the book is otherwise left as it is.
struct KindleBook: BookFromSource {
    /// At least one.
    var clippings: [KindleClipping]

    var match: BookMatch {
        let first = clippings[0]
        return BookMatch(title: first.title, author: first.author, isbn: nil,
                         sourceID: DerivedSourceID.forBook(title: first.title, author: first.author), matchTitle: true)
    }

    var origin: ImportProblem { ImportProblem(line: clippings[0].line, message: "") }

    var entries: Int { clippings.count }

    func applied(to book: Book, isNew: Bool) -> (book: Book, passages: PassageChanges?) {
        var book = book
        let merged = PassageMatcher.merge(KindlePassages.passages(from: clippings), into: book.passages,
                                          extendsByLongerEntries: true)
        book.passages = merged.passages
        return (book, merged.changes)
    }

    /// What a clippings file holds: its books (clippings grouped by title and author, in the
    /// order each first appears), its bookmarks and the entries it could not read.
    static func reading(of source: SourceText) -> SourceReading<KindleBook> {
        let (clippings, problems) = KindleClippings.parse(source.text, garbledLines: source.garbledLines)
        var byBook: [BookMatchKey: [KindleClipping]] = [:]
        var bookOrder: [BookMatchKey] = []
        for clipping in clippings where clipping.kind != .bookmark {
            let key = BookMatchKey(title: clipping.title, author: clipping.author)
            if byBook[key] == nil { bookOrder.append(key) }
            byBook[key, default: []].append(clipping)
        }
        let bookmarkLines = clippings.filter { $0.kind == .bookmark }.map(\.line)
        return SourceReading(books: bookOrder.map { KindleBook(clippings: byBook[$0]!) }, problems: problems,
                             bookmarks: bookmarkLines.count, bookmarkLines: bookmarkLines, encoding: source.encoding)
    }
}

/// Turns one book's clippings into the passages they amount to, for ``PassageMatcher`` to merge
/// into the passages the book already has.
///
/// A Kindle appends to `My Clippings.txt` and never rewrites it: extending a highlight adds a
/// second, longer entry, and a note is a separate entry at the highlight's last location. It
/// names no highlight, so a passage's key is derived from its entry: `kindle:` and a hash of
/// the book, the location (in a PDF, `page 42`) and the text (a bare note's: its note). So
/// importing the same file, or a longer one from the same Kindle, again adds nothing twice and
/// keeps the user's edits; an extended highlight, whose key is new, finds its shorter version by
/// location, and the passage keeps both keys.
enum KindlePassages {
    /// The passages `clippings` (one book's, in file order) amount to: extended highlights
    /// replace their shorter versions (the key is the longest entry's), notes are attached to
    /// the highlight at their location.
    static func passages(from clippings: [KindleClipping]) -> [SourcePassage] {
        guard let first = clippings.first else { return [] }
        let book = BookMatchKey(title: first.title, author: first.author)
        var highlights = PassageMatcher([], extendsByLongerEntries: true)
        for clipping in clippings where clipping.kind == .highlight {
            highlights.merge(SourcePassage(clipping, of: book))
        }
        var passages = highlights.passages.map {
            SourcePassage(kindle: book, text: $0.text, note: nil, page: $0.page, location: $0.location, dateAdded: $0.dateAdded)
        }
        for note in clippings where note.kind == .note {
            if let position = note.location?.end,
               let index = passages.lastIndex(where: { KindleLocation(parsing: $0.location ?? "")?.contains(position) ?? false }) {
                passages[index].note = [passages[index].note, note.text].compactMap { $0 }.joined(separator: "\n\n")
            } else {
                // A note on no highlight (typed at a bare position) keeps its place as a
                // passage of its own, so nothing the reader wrote is dropped.
                passages.append(SourcePassage(note, of: book))
            }
        }
        return passages
    }
}

extension SourcePassage {
    /// A Kindle's entry of `book` with its key (``KindlePassages``): a highlight's note is
    /// attached later and is no part of it.
    fileprivate init(kindle book: BookMatchKey, text: String, note: String?, page: Int?, location: String?,
                     dateAdded: CalendarDate?) {
        self.init(key: Self.derivedKey("kindle", book: book, place: location ?? page.map { "page \($0)" }, text: text, note: note),
                  text: text, note: note, page: page, location: location, dateAdded: dateAdded)
    }

    /// A clipping's highlight, or its note as a note made without a highlight.
    fileprivate init(_ clipping: KindleClipping, of book: BookMatchKey) {
        let isNote = clipping.kind == .note
        self.init(kindle: book, text: isNote ? "" : clipping.text, note: isNote ? clipping.text : nil, page: clipping.page,
                  location: clipping.location?.description, dateAdded: clipping.dateAdded)
    }
}
