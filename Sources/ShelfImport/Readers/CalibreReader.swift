import Foundation
import GRDB
import ShelfModel

/// Reads a Calibre library's `metadata.db`: each book's title, authors in order, ISBN and other
/// identifiers, tags, series and index, rating (0–10 → 0.5–5), publisher, publication date,
/// languages, comments (HTML → Markdown, as the book's free text), custom columns (as
/// properties named by their label) and folder, and the highlights and notes of Calibre's
/// viewer (`annotations`, keyed by their uuid; bookmarks and highlights removed in the
/// viewer are left out).
///
/// The database is read from a `SQLiteSnapshot`, never in place: Calibre may be running.
enum CalibreReader {
    static let databaseName = "metadata.db"

    /// The database of a library folder.
    static func database(in folder: URL) -> URL? {
        let file = folder.appendingPathComponent(databaseName)
        return FileManager.default.fileExists(atPath: file.path) ? file : nil
    }

    static func read(_ url: URL) throws -> SourceReading<SourceBook> {
        let file = MarkdownFolderImport.isFolder(url) ? url.appendingPathComponent(databaseName) : url
        return try SQLiteSnapshot.copy(of: file, format: .calibre).read { db in
            for (table, columns) in ["books": ["id", "title", "uuid", "path"], "authors": ["id", "name"], "books_authors_link": ["book", "author"]] {
                let missing = columns.filter { !((try? SQLiteSnapshot.columns(of: table, in: db)) ?? []).contains($0) }
                guard missing.isEmpty else {
                    throw ImportError.notFormat(path: file.path, format: .calibre,
                                                reason: "it has no \(table) table with \(missing.joined(separator: ", ")) (not a Calibre library's database)")
                }
            }
            var reading = SourceReading<SourceBook>()
            let lists = try CalibreLists(db)
            reading.omissions = lists.omissions
            let customColumns = try CalibreCustomColumn.all(db)
            let hasAnnotations = try !SQLiteSnapshot.columns(of: "annotations", in: db).isEmpty
            if !hasAnnotations {
                reading.omissions.append("calibre: the library has no annotations table (Calibre before 5.0), so no highlights were imported")
            }
            for row in try Row.fetchAll(db, sql: "SELECT id, title, uuid, path, pubdate, series_index FROM books ORDER BY id") {
                guard let id = row.integer("id").map(Int64.init), let title = row.text("title")?.trimmed(), !title.isEmpty else { continue }
                var book = SourceBook(title: title, ownID: "calibre:" + (row.text("uuid") ?? String(id)),
                                      origin: ImportProblem(line: 0, message: ""))
                book.authors = lists.authors[id] ?? []
                book.reading.tags = lists.tags[id] ?? []
                let identifiers = lists.identifiers[id] ?? []
                book.isbn = identifiers.first { $0.type == "isbn" }.flatMap { CellValues.isbn($0.value) }
                var properties: [Property] = []
                let others = identifiers.filter { $0.type != "isbn" || CellValues.isbn($0.value) == nil }
                if !others.isEmpty {
                    properties.append(Property(key: "identifiers", value: .map(others.map { Property(key: $0.type, value: .string($0.value)) })))
                }
                if let series = lists.series[id] {
                    properties.append(Property(key: "series", value: .string(series)))
                    let index = row.real("series_index") ?? 1
                    properties.append(Property(key: "series_index", value: index == index.rounded() ? .int(Int(index)) : .double(index)))
                }
                if let rating = lists.ratings[id], rating > 0 { book.reading.rating = Double(rating) / 2 }
                if let publisher = lists.publishers[id] { properties.append(Property(key: "publisher", value: .string(publisher))) }
                // Calibre writes year 101 for "no date".
                if let published = row.text("pubdate").flatMap(CalendarDate.init(parsing:)), published.year > 101 {
                    properties.append(Property(key: "published", value: .date(published)))
                }
                if let languages = lists.languages[id] { properties.append(Property(key: "languages", value: .list(languages.map(PropertyValue.string)))) }
                properties += try customColumns.compactMap { try $0.property(forBook: id, in: db) }
                if let path = row.text("path") { properties.append(Property(key: "calibre_path", value: .string(path))) }
                book.reading.properties = properties
                book.description = lists.comments[id].map(HTMLToMarkdown.convert).flatMap { $0.isEmpty ? nil : $0 }
                if hasAnnotations { try readAnnotations(of: id, into: &book, reading: &reading, db: db) }
                reading.books.append(book)
            }
            return reading
        }
    }

    private static func readAnnotations(of book: Int64, into source: inout SourceBook, reading: inout SourceReading<SourceBook>,
                                        db: Database) throws {
        let rows = try Row.fetchAll(db, sql: "SELECT annot_id, annot_type, annot_data FROM annotations WHERE book = ? ORDER BY id",
                                    arguments: [book])
        for row in rows {
            guard let data = row.text("annot_data")?.data(using: .utf8),
                  let annotation = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                reading.problems.append(ImportProblem(line: 0, message: "annotation \(row.text("annot_id") ?? "?") of book \(book) is not readable JSON and was skipped"))
                continue
            }
            guard row.text("annot_type") == "highlight", annotation["removed"] as? Bool != true else {
                if row.text("annot_type") == "bookmark" { reading.bookmarks += 1 }
                continue
            }
            let text = (annotation["highlighted_text"] as? String)?.trimmed() ?? ""
            let note = (annotation["notes"] as? String)?.trimmed()
            guard !text.isEmpty || !(note ?? "").isEmpty else { continue }
            let style = annotation["style"] as? [String: Any]
            source.passages.append(SourcePassage(
                key: "calibre:" + ((annotation["uuid"] as? String) ?? (row.text("annot_id") ?? "")), text: text,
                note: note?.isEmpty == false ? note : nil, chapter: (annotation["toc_family_titles"] as? [String])?.last,
                color: style?["which"] as? String,
                dateAdded: (annotation["timestamp"] as? String).flatMap(CalendarDate.init(parsing:))))
        }
    }
}

/// Calibre's many-to-many tables, read once for all books. A table this Calibre version lacks
/// is left out and named in `omissions`.
private struct CalibreLists {
    var authors: [Int64: [String]] = [:]
    var tags: [Int64: [String]] = [:]
    var identifiers: [Int64: [(type: String, value: String)]] = [:]
    var series: [Int64: String] = [:]
    var ratings: [Int64: Int] = [:]
    var publishers: [Int64: String] = [:]
    var languages: [Int64: [String]] = [:]
    var comments: [Int64: String] = [:]
    var omissions: [String] = []

    init(_ db: Database) throws {
        func exists(_ table: String, holding meaning: String) throws -> Bool {
            guard try SQLiteSnapshot.columns(of: table, in: db).isEmpty else { return true }
            omissions.append("calibre: the library has no \(table) table (another Calibre version?), so \(meaning) were not imported")
            return false
        }
        func pairs(_ sql: String) throws -> [(book: Int64, value: String)] {
            try Row.fetchAll(db, sql: sql).compactMap { row in
                row.integer("book").flatMap { book in row.text(at: 1).map { (Int64(book), $0) } }
            }
        }
        /// The values of a link table in link order, or none when this Calibre has no such table.
        func linked(_ table: String, _ column: String, valueTable: String, value: String) throws -> [Int64: [String]] {
            guard try exists(table, holding: valueTable) else { return [:] }
            return Dictionary(grouping: try pairs("SELECT l.book, v.\(value) FROM \(table) l JOIN \(valueTable) v ON v.id = l.\(column) ORDER BY l.id"),
                              by: \.book).mapValues { $0.map(\.value) }
        }
        authors = try linked("books_authors_link", "author", valueTable: "authors", value: "name")
        tags = try linked("books_tags_link", "tag", valueTable: "tags", value: "name")
        series = try linked("books_series_link", "series", valueTable: "series", value: "name").compactMapValues(\.first)
        ratings = try linked("books_ratings_link", "rating", valueTable: "ratings", value: "rating").compactMapValues { $0.first.flatMap { Int($0) } }
        publishers = try linked("books_publishers_link", "publisher", valueTable: "publishers", value: "name").compactMapValues(\.first)
        languages = try linked("books_languages_link", "lang_code", valueTable: "languages", value: "lang_code")
        if try exists("identifiers", holding: "identifiers") {
            for row in try Row.fetchAll(db, sql: "SELECT book, type, val FROM identifiers ORDER BY id") {
                guard let book = row.integer("book"), let type = row.text("type"), let value = row.text("val") else { continue }
                identifiers[Int64(book), default: []].append((type, value))
            }
        }
        if try exists("comments", holding: "comments") {
            comments = Dictionary(try pairs("SELECT book, text FROM comments"), uniquingKeysWith: { first, _ in first })
        }
    }
}

/// A custom column the user made in Calibre (`custom_column_N`), kept as a property named by
/// its lookup label. Normalised columns (text, series, enumerations) hold their values in
/// their own table with a link table; the others hold one value per book.
private struct CalibreCustomColumn {
    var id: Int64
    var label: String
    var isMultiple: Bool
    var isNormalized: Bool

    static func all(_ db: Database) throws -> [CalibreCustomColumn] {
        guard try !SQLiteSnapshot.columns(of: "custom_columns", in: db).isEmpty else { return [] }
        return try Row.fetchAll(db, sql: "SELECT id, label, is_multiple, normalized FROM custom_columns WHERE mark_for_delete = 0 ORDER BY id")
            .compactMap { row in
                guard let id = row.integer("id"), let label = row.text("label") else { return nil }
                return CalibreCustomColumn(id: Int64(id), label: label, isMultiple: row.integer("is_multiple") == 1,
                                           isNormalized: row.integer("normalized") == 1)
            }
    }

    func property(forBook book: Int64, in db: Database) throws -> Property? {
        let sql = isNormalized
            ? "SELECT v.value FROM books_custom_column_\(id)_link l JOIN custom_column_\(id) v ON v.id = l.value WHERE l.book = ? ORDER BY l.id"
            : "SELECT value FROM custom_column_\(id) WHERE book = ?"
        let values = try DatabaseValue.fetchAll(db, sql: sql, arguments: [book]).compactMap(Self.propertyValue)
        guard let first = values.first else { return nil }
        return Property(key: label, value: isMultiple ? .list(values) : first)
    }

    private static func propertyValue(_ value: DatabaseValue) -> PropertyValue? {
        switch value.storage {
        case .int64(let number): .int(Int(number))
        case .double(let number): .double(number)
        case .string(let text): .string(text)
        case .null, .blob: nil
        }
    }
}
