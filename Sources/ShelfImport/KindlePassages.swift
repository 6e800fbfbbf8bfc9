import ShelfModel

/// How an import changed one book's passages.
struct PassageChanges: Hashable, Sendable {
    var added = 0
    var updated = 0
    var unchanged = 0
}

/// One book's clippings from a Kindle, in file order: their passages merge into the book's by
/// location (``KindlePassages``); the book is otherwise left as it is.
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
        let merged = KindlePassages.merge(KindlePassages.passages(from: clippings), into: book.passages)
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

/// Turns one book's clippings into passages and merges them into the passages it already has.
///
/// A Kindle appends to `My Clippings.txt` and never rewrites it: extending a highlight adds a
/// second, longer entry, and a note is a separate entry at the highlight's last location.
/// Both files and stored passages are matched by location, so importing the same file (or a
/// longer one from the same Kindle) again adds nothing twice and keeps the user's edits.
enum KindlePassages {
    /// The passages `clippings` (one book's, in file order) amount to: extended highlights
    /// replace their shorter versions, notes are attached to the highlight at their location.
    static func passages(from clippings: [KindleClipping]) -> [Passage] {
        var passages: [Passage] = []
        for clipping in clippings where clipping.kind == .highlight {
            let passage = Passage(page: clipping.page, location: clipping.location?.description,
                                  text: clipping.text, dateAdded: clipping.dateAdded)
            if let index = passages.lastIndex(where: { isSameOrShorter($0, than: passage) }) {
                passages[index].text = passage.text
                passages[index].location = passage.location
                passages[index].page = passage.page ?? passages[index].page
            } else {
                passages.append(passage)
            }
        }
        for note in clippings where note.kind == .note {
            if let position = note.location?.end,
               let index = passages.lastIndex(where: { KindleLocation(parsing: $0.location ?? "")?.contains(position) ?? false }) {
                passages[index].note = [passages[index].note, note.text].compactMap { $0 }.joined(separator: "\n\n")
            } else {
                // A note on no highlight (typed at a bare position) keeps its place as a
                // passage of its own, so nothing the reader wrote is dropped.
                passages.append(Passage(page: note.page, location: note.location?.description, text: "",
                                        note: note.text, dateAdded: note.dateAdded))
            }
        }
        return passages
    }

    /// `existing` with `incoming` merged in, and what changed.
    static func merge(_ incoming: [Passage], into existing: [Passage]) -> (passages: [Passage], changes: PassageChanges) {
        var passages = existing
        var changes = PassageChanges()
        for passage in incoming {
            if let index = passages.firstIndex(where: { isSameOrShorter(passage, than: $0) }) {
                // Already imported (possibly as a longer version); only a new note is taken.
                if passages[index].note == nil, let note = passage.note {
                    passages[index].note = note
                    changes.updated += 1
                } else {
                    changes.unchanged += 1
                }
            } else if let index = passages.firstIndex(where: { isSameOrShorter($0, than: passage) }) {
                passages[index].text = passage.text
                passages[index].location = passage.location
                passages[index].page = passage.page ?? passages[index].page
                passages[index].note = passages[index].note ?? passage.note
                changes.updated += 1
            } else {
                passages.append(passage)
                changes.added += 1
            }
        }
        return (passages, changes)
    }

    /// Whether `shorter` is `longer` or an earlier version of it: the same location, or a
    /// location range inside `longer`'s with text inside `longer`'s text. Passages without a
    /// location (PDFs have only pages) match on page and text.
    private static func isSameOrShorter(_ shorter: Passage, than longer: Passage) -> Bool {
        guard let short = shorter.location.flatMap(KindleLocation.init(parsing:)),
              let long = longer.location.flatMap(KindleLocation.init(parsing:)) else {
            return shorter.location == nil && longer.location == nil
                && shorter.page == longer.page && longer.text.contains(shorter.text)
        }
        return short == long || (long.contains(short) && longer.text.contains(shorter.text))
    }
}
