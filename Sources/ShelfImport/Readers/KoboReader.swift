import Foundation
import GRDB
import ShelfModel

/// Reads a Kobo e-reader's `.kobo/KoboReader.sqlite`: books from `content` (ContentType 6:
/// title, author, ISBN, publisher, series, description, read status, percent read),
/// highlights and notes from `Bookmark`.
///
/// The database is read from a `SQLiteSnapshot`, never in place. Firmware versions differ in
/// columns: a missing optional column is left out with the reason in the summary; the others
/// are read.
enum KoboReader {
    static let databaseName = "KoboReader.sqlite"

    /// The database of a device folder (`<device>/.kobo/KoboReader.sqlite`) or of a `.kobo` folder.
    static func database(in folder: URL) -> URL? {
        [folder.appendingPathComponent(".kobo/\(databaseName)"), folder.appendingPathComponent(databaseName)]
            .first { FileManager.default.fileExists(atPath: $0.path) }
    }

    static func read(_ url: URL) throws -> SourceReading<SourceBook> {
        var file = url
        if MarkdownFolderImport.isFolder(url) {
            guard let database = database(in: url) else {
                throw ImportError.notFormat(path: url.path, format: .kobo, reason: "the folder has no .kobo/\(databaseName)")
            }
            file = database
        }
        return try SQLiteSnapshot.copy(of: file, format: .kobo).read { db in
            let columns = try KoboColumns(db, path: file.path)
            var reading = SourceReading<SourceBook>(omissions: columns.omissions)
            var books: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT \(columns.contentSelect) FROM content WHERE ContentType = 6 ORDER BY rowid") {
                let id = row.text("ContentID") ?? ""
                guard let title = row.text("Title")?.trimmed(), !title.isEmpty else {
                    reading.problems.append(ImportProblem(line: 0, message: "content \(id) has no Title and was skipped"))
                    continue
                }
                books[id] = reading.books.count
                reading.books.append(book(from: row, id: id, title: title))
            }
            let chapters = try columns.chapterTitles(db)
            for row in try Row.fetchAll(db, sql: "SELECT \(columns.bookmarkSelect) FROM Bookmark ORDER BY rowid") {
                let id = row.text("BookmarkID") ?? ""
                guard let index = books[row.text("VolumeID") ?? ""] else {
                    reading.problems.append(ImportProblem(line: 0, message: "bookmark \(id) belongs to no book in content (VolumeID \(row.text("VolumeID") ?? "none")) and was skipped"))
                    continue
                }
                let text = row.text("Text")?.trimmed() ?? ""
                let note = row.text("Annotation")?.trimmed()
                guard !text.isEmpty || !(note ?? "").isEmpty, row.text("Type") != "dogear" else {
                    reading.bookmarks += 1
                    continue
                }
                reading.books[index].passages.append(SourcePassage(
                    key: "kobo:" + id, text: text, note: note?.isEmpty == false ? note : nil,
                    location: row.real("ChapterProgress").map { "\(Int(($0 * 100).rounded()))% of chapter" },
                    chapter: row.text("ContentID").flatMap { chapters[$0] },
                    color: row.integer("Color").flatMap(color), dateAdded: row.text("DateCreated").flatMap(CalendarDate.init(parsing:))))
            }
            return reading
        }
    }

    private static func book(from row: Row, id: String, title: String) -> SourceBook {
        var book = SourceBook(title: title, ownID: "kobo:" + id, origin: ImportProblem(line: 0, message: ""))
        if let author = row.text("Attribution")?.trimmed(), !author.isEmpty { book.authors = [author] }
        book.isbn = row.text("ISBN").flatMap(CellValues.isbn)
        switch row.integer("ReadStatus") {
        case 1: book.reading.status = .reading
        case 2: book.reading.status = .read
        default: break
        }
        if let percent = row.integer("___PercentRead"), percent > 0 {
            if let pages = row.integer("___NumPages"), pages > 0 {
                book.reading.totalPages = pages
                book.reading.currentPage = pages * percent / 100
            } else {
                book.reading.properties.append(Property(key: "progress_percent", value: .int(percent)))
            }
        }
        for (column, key) in [("Publisher", "publisher"), ("Series", "series"), ("SeriesNumber", "series_index")] {
            if let value = row.text(column)?.trimmed(), !value.isEmpty {
                book.reading.properties.append(Property(key: key, value: CellValues.propertyValue(value)))
            }
        }
        book.description = row.text("Description").map(HTMLToMarkdown.convert).flatMap { $0.isEmpty ? nil : $0 }
        return book
    }

    /// The highlight colours of newer firmware, by number.
    private static func color(_ number: Int) -> String? {
        let colors = ["yellow", "pink", "blue", "green"]
        return colors.indices.contains(number) ? colors[number] : nil
    }
}

/// The columns this database has of the ones Kobo readers write, checked once against
/// `PRAGMA table_info`: the required ones refuse the file, the optional ones are left out.
private struct KoboColumns {
    private static let requiredContent = ["ContentID", "ContentType", "Title"]
    private static let optionalContent: KeyValuePairs = [
        "Attribution": "authors", "ISBN": "ISBNs", "ReadStatus": "read status", "___PercentRead": "progress",
        "___NumPages": "page counts", "Publisher": "publishers", "Series": "series", "SeriesNumber": "series numbers",
        "Description": "descriptions",
    ]
    private static let requiredBookmark = ["BookmarkID", "VolumeID", "Text"]
    private static let optionalBookmark: KeyValuePairs = [
        "Annotation": "notes", "ContentID": "chapters", "ChapterProgress": "positions in the chapter", "DateCreated": "dates",
        "Type": "bookmark types", "Color": "colours",
    ]

    let contentSelect: String
    let bookmarkSelect: String
    let hasChapters: Bool
    var omissions: [String] = []

    init(_ db: Database, path: String) throws {
        let content = try SQLiteSnapshot.columns(of: "content", in: db)
        let bookmark = try SQLiteSnapshot.columns(of: "Bookmark", in: db)
        for (table, have, required) in [("content", content, Self.requiredContent), ("Bookmark", bookmark, Self.requiredBookmark)] {
            let missing = required.filter { !have.contains($0) }
            guard missing.isEmpty else {
                let what = have.isEmpty ? "it has no \(table) table" : "its \(table) table lacks \(missing.joined(separator: ", "))"
                throw ImportError.notFormat(path: path, format: .kobo, reason: what)
            }
        }
        var omissions: [String] = []
        func select(_ table: String, _ have: Set<String>, _ required: [String], _ optional: KeyValuePairs<String, String>) -> String {
            var selected = required
            for (column, meaning) in optional {
                if have.contains(column) {
                    selected.append(column)
                } else {
                    omissions.append("kobo: \(table) has no \(column) column (another firmware version?), so \(meaning) were not imported")
                }
            }
            return selected.map { "\"\($0)\"" }.joined(separator: ", ")
        }
        contentSelect = select("content", content, Self.requiredContent, Self.optionalContent)
        bookmarkSelect = select("Bookmark", bookmark, Self.requiredBookmark, Self.optionalBookmark)
        hasChapters = bookmark.contains("ContentID")
        self.omissions = omissions
    }

    /// Chapter titles by their content id (the rows of a book's chapters, ContentType 899).
    func chapterTitles(_ db: Database) throws -> [String: String] {
        guard hasChapters else { return [:] }
        let rows = try Row.fetchAll(db, sql: "SELECT ContentID, Title FROM content WHERE ContentType <> 6 AND Title <> ''")
        return Dictionary(rows.compactMap { row in row.text("ContentID").flatMap { id in row.text("Title").map { (id, $0) } } },
                          uniquingKeysWith: { first, _ in first })
    }
}
