import Foundation
import ShelfModel

/// Reads Readwise's CSV export (`Highlight,Book Title,Book Author,Amazon Book ID,Note,Color,
/// Tags,Location Type,Location,Highlighted at,Document tags`): one row per highlight, grouped
/// into books by title and author.
///
/// Rows carry no id, so a highlight's key is a hash of its book and text: the same highlight
/// in a later export (reordered, with more rows) is found again.
enum ReadwiseReader {
    /// The columns that tell Readwise's export from other CSVs (lowercased).
    static let telltaleColumns: Set<String> = ["highlight", "book title", "book author", "highlighted at"]
    /// The other columns read, with what they hold, for the summary when one is missing.
    private static let optionalColumns: KeyValuePairs<String, String> = [
        "note": "notes", "color": "colours", "tags": "highlight tags", "location type": "location types",
        "location": "locations", "document tags": "book tags", "amazon book id": "Amazon book ids",
    ]

    static func hasReadwiseHeader(_ text: String) -> Bool {
        guard let table = CSVTable(text: String(text.prefix { $0 != "\n" && $0 != "\r\n" })) else { return false }
        return Set(table.header.map { $0.trimmed().lowercased() }).isSuperset(of: telltaleColumns)
    }

    static func read(_ file: SourceFile) throws -> SourceReading<SourceBook> {
        let url = file.url
        let source = try file.text()
        guard let table = CSVTable(text: source.text),
              Set(table.header.map { $0.trimmed().lowercased() }).isSuperset(of: telltaleColumns) else {
            throw ImportError.notFormat(path: url.path, format: .readwise,
                                        reason: "its first line lacks Readwise's columns Highlight, Book Title, Book Author and Highlighted at")
        }
        let column = Dictionary(table.header.enumerated().map { ($0.element.trimmed().lowercased(), $0.offset) },
                                uniquingKeysWith: { first, _ in first })
        var reading = SourceReading<SourceBook>(encoding: source.encoding)
        for (name, meaning) in optionalColumns where column[name] == nil {
            reading.omissions.append("readwise: the file has no \(name.capitalized) column (another export version?), so \(meaning) were not imported")
        }
        let known = telltaleColumns.union(optionalColumns.map(\.key))
        for name in table.header where !known.contains(name.trimmed().lowercased()) && !name.trimmed().isEmpty {
            reading.omissions.append("readwise: the column \(name) is not one Shelf reads, so it was left out")
        }
        var bookIndex: [BookMatchKey: Int] = [:]
        for record in table.records {
            func cell(_ name: String) -> String? {
                guard let index = column[name], index < record.cells.count else { return nil }
                let value = record.cells[index].trimmed()
                return value.isEmpty ? nil : value
            }
            guard let title = cell("book title") else {
                reading.problems.append(ImportProblem(line: record.line, message: "the row has no Book Title, so its highlight belongs to no book"))
                continue
            }
            let text = cell("highlight") ?? ""
            let note = cell("note")
            guard !text.isEmpty || note != nil else {
                reading.problems.append(ImportProblem(line: record.line, message: "the row has neither a Highlight nor a Note"))
                continue
            }
            var book = SourceBook(title: title, authors: cell("book author").map { [$0] } ?? [], origin: ImportProblem(line: record.line, message: ""))
            let key = BookMatchKey(title: title, author: book.author)
            var passage = SourcePassage(key: SourcePassage.derivedKey("readwise", book: key, text: text, note: note),
                                        text: text, note: note, tags: cell("tags").map(Passage.tags(from:)) ?? [],
                                        color: cell("color"), dateAdded: cell("highlighted at").flatMap(CalendarDate.init(parsing:)))
            if let location = cell("location") {
                switch cell("location type")?.lowercased() {
                case "page": passage.page = Int(location)
                case "location", nil: passage.location = location
                case let type?: passage.location = "\(type) \(location)"
                }
            }
            if let index = bookIndex[key] {
                reading.books[index].passages.append(passage)
                continue
            }
            book.reading.tags = cell("document tags").map(Passage.tags(from:)) ?? []
            book.reading.properties = cell("amazon book id").map { [Property(key: "amazon_book_id", value: .string($0))] } ?? []
            book.passages = [passage]
            bookIndex[key] = reading.books.count
            reading.books.append(book)
        }
        return reading
    }
}
