import Foundation
import ShelfModel

/// A row (or, in a folder import, a file) that was not imported, and why.
public struct ImportProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// In a folder import, the file's path inside the folder; nil for single-file imports.
    public var file: String?
    /// 1-based line of the file where the row (or clipping, or problem) starts; 0 for a source
    /// without lines (a database), whose message names the record instead.
    public var line: Int
    public var message: String

    public init(file: String? = nil, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// `line 7: date_finished: "2025/13/45" is not a date (…)`, `Books/Dune.md line 3: …`, or
    /// the message alone for a record of a database.
    public var description: String { (file.map { "\($0) " } ?? "") + (line > 0 ? "line \(line): " : "") + message }
}

/// Turns the records of one CSV file into `CatalogueRow`s, by a column map resolved against
/// the file's header once.
struct BookRowDecoder {
    /// What one header column feeds.
    private struct Column {
        var name: String
        var field: BookField?
        /// Where the cell is kept when it feeds no field (or loses to another column of its field).
        var propertyKey: String
    }

    let format: ImportFormat
    private let header: [String]
    private let columns: [Column]
    /// For each field, the indices of its columns in priority order.
    private let fieldColumns: [BookField: [Int]]

    /// Resolves `userMap` over the format's defaults against `header`. Throws when `userMap`
    /// names a column the header lacks, or when no column gives the title.
    init(format: ImportFormat, header: [String], userMap: ColumnMap) throws {
        let keys = header.map(ColumnMap.normalized)
        for assignment in userMap.assignments where !keys.contains(ColumnMap.normalized(assignment.column)) {
            throw ImportError.unknownColumn(assignment.column, available: header)
        }
        let map = userMap.overriding(format.defaultColumnMap(header: header))

        var usedKeys = Set<String>()
        /// `key`, prefixed with the format when it is a field's own key, numbered when taken.
        func uniqueKey(_ key: String) -> String {
            let base = ColumnMap.reservedKeys.contains(key) ? "\(format.rawValue)_\(key)" : key
            var candidate = base
            var suffix = 2
            while usedKeys.contains(candidate) {
                candidate = "\(base)_\(suffix)"
                suffix += 1
            }
            usedKeys.insert(candidate)
            return candidate
        }
        var fieldColumns: [BookField: [(priority: Int, index: Int)]] = [:]
        var columns: [Column] = []
        for (index, name) in header.enumerated() {
            var field: BookField?
            var key = CellValues.propertyKey(forColumn: name)
            if let priority = map.assignments.firstIndex(where: { ColumnMap.normalized($0.column) == keys[index] }) {
                switch map.assignments[priority].target {
                case .field(let target):
                    field = target
                    fieldColumns[target, default: []].append((priority, index))
                case .property(let target):
                    key = target
                }
            }
            columns.append(Column(name: name, field: field, propertyKey: uniqueKey(key)))
        }
        guard fieldColumns[.title] != nil else {
            throw ImportError.missingColumn(field: BookField.title.rawValue, available: header)
        }
        self.format = format
        self.header = header
        self.columns = columns
        self.fieldColumns = fieldColumns.mapValues { $0.sorted { $0.priority < $1.priority }.map(\.index) }
    }

    /// The book `record` describes, or the problem that keeps it out.
    func decode(_ record: CSVRecord) -> Result<CatalogueRow, ImportProblem> {
        guard record.cells.count <= header.count || record.cells[header.count...].allSatisfy(CellValues.isBlank) else {
            return .failure(ImportProblem(line: record.line, message: "the row has \(record.cells.count) cells but the header has \(header.count); a cell holding a comma is probably missing its quotes"))
        }
        func cell(_ index: Int) -> String { index < record.cells.count ? record.cells[index] : "" }
        var book = CatalogueRow(line: record.line, sourceID: "", hasOwnID: false, title: "")
        var filled = Set<BookField>()
        var problems: [String] = []
        var consumed = Set<Int>()
        for field in BookField.allCases {
            for index in fieldColumns[field] ?? [] where !CellValues.isBlank(cell(index)) {
                if field != .tags, filled.contains(field) { break }
                do {
                    if try book.set(field, from: format.fieldText(cell(index))) {
                        filled.insert(field)
                        consumed.insert(index)
                    }
                } catch {
                    problems.append("\(columns[index].name): \((error as? CellProblem)?.message ?? "\(error)")")
                }
            }
        }
        if !filled.contains(.title) { problems.insert("the title is empty", at: 0) }
        guard problems.isEmpty else {
            return .failure(ImportProblem(line: record.line, message: problems.joined(separator: "; ")))
        }
        book.sourceID = book.hasOwnID ? "\(format.rawValue):\(book.sourceID)"
            : DerivedSourceID.forBook(title: book.title, author: book.author)
        // Goodreads lists the exclusive shelf (`to-read`, `currently-reading`) among the
        // shelves too; it is the status, and as a tag it would outlive the next status change.
        if book.reading.status != nil { book.reading.tags.removeAll { CellValues.status($0) != nil } }
        book.reading.properties = columns.indices
            .filter { !consumed.contains($0) && !CellValues.isBlank(cell($0)) }
            .map { Property(key: columns[$0].propertyKey, value: CellValues.propertyValue(cell($0))) }
        return .success(book)
    }
}

extension CatalogueRow {
    /// Parses `text` into `field` (for `sourceID`: the export's own id, without the format
    /// prefix). Returns false when the text is kept as a property instead — an ISBN column
    /// holding something else (StoryGraph's own UIDs), or a status word Shelf does not know
    /// (shelves are user-defined) — and throws when it is malformed.
    fileprivate mutating func set(_ field: BookField, from text: String) throws -> Bool {
        let trimmed = text.trimmed()
        switch field {
        case .title: title = trimmed
        case .author: author = trimmed
        case .sourceID:
            sourceID = trimmed
            hasOwnID = true
        case .isbn:
            guard let isbn = CellValues.isbn(trimmed) else { return false }
            self.isbn = isbn
        case .status:
            guard let status = CellValues.status(trimmed) else { return false }
            reading.status = status
        case .currentPage: reading.currentPage = try CellValues.pageCount(trimmed)
        case .totalPages: reading.totalPages = try CellValues.pageCount(trimmed)
        case .rating: reading.rating = try CellValues.rating(trimmed)
        case .dateAdded: reading.dateAdded = try CellValues.date(trimmed, end: false)
        case .dateFinished: reading.dateFinished = try CellValues.date(trimmed, end: true)
        case .tags: reading.tags += CellValues.tags(trimmed).filter { !reading.tags.contains($0) }
        }
        return true
    }
}
