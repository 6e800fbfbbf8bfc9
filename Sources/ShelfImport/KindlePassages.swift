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
        let merged = PassageMatcher.merge(KindlePassages.passages(from: clippings), into: book.passages)
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
/// names no highlight, so its passages carry no source key and are found by location (page
/// and text in a PDF), which makes importing the same file, or a longer one from the same
/// Kindle, again add nothing twice.
enum KindlePassages {
    /// The passages `clippings` (one book's, in file order) amount to: extended highlights
    /// replace their shorter versions, notes are attached to the highlight at their location.
    static func passages(from clippings: [KindleClipping]) -> [SourcePassage] {
        var highlights = PassageMatcher([])
        for clipping in clippings where clipping.kind == .highlight {
            highlights.merge(SourcePassage(clipping))
        }
        var passages = highlights.passages.map {
            SourcePassage(text: $0.text, page: $0.page, location: $0.location, dateAdded: $0.dateAdded)
        }
        for note in clippings where note.kind == .note {
            if let position = note.location?.end,
               let index = passages.lastIndex(where: { KindleLocation(parsing: $0.location ?? "")?.contains(position) ?? false }) {
                passages[index].note = [passages[index].note, note.text].compactMap { $0 }.joined(separator: "\n\n")
            } else {
                // A note on no highlight (typed at a bare position) keeps its place as a
                // passage of its own, so nothing the reader wrote is dropped.
                passages.append(SourcePassage(note))
            }
        }
        return passages
    }
}

extension SourcePassage {
    /// A clipping's highlight, or its note as a note made without a highlight.
    fileprivate init(_ clipping: KindleClipping) {
        let isNote = clipping.kind == .note
        self.init(text: isNote ? "" : clipping.text, note: isNote ? clipping.text : nil, page: clipping.page,
                  location: clipping.location?.description, dateAdded: clipping.dateAdded)
    }
}
