import Foundation

/// What each CSV format's columns mean, before any `--map`.
extension ImportFormat {
    /// The column assignments this format starts from for a file with `header`.
    func defaultColumnMap(header: [String]) -> ColumnMap {
        switch self {
        case .goodreads:
            ColumnMap.fields([
                "Book Id": .sourceID, "Title": .title, "Author": .author,
                "ISBN": .isbn, "ISBN13": .isbn, "My Rating": .rating, "Number of Pages": .totalPages,
                "Date Read": .dateFinished, "Date Added": .dateAdded,
                "Bookshelves": .tags, "Exclusive Shelf": .status,
            ])
        case .storygraph:
            ColumnMap.fields([
                "Title": .title, "Authors": .author, "Author": .author,
                "ISBN/UID": .isbn, "ISBN": .isbn, "Read Status": .status, "Star Rating": .rating,
                "Date Added": .dateAdded, "Last Date Read": .dateFinished, "Tags": .tags,
            ])
        case .notion, .csv:
            ColumnMap(header.compactMap { column in
                BookField.commonColumnNames[CellValues.propertyKey(forColumn: column)]
                    .map { ColumnAssignment(column: column, target: .field($0)) }
            })
        case .kindle, .markdown, .kobo, .koreader, .readwise, .calibre:
            ColumnMap()
        }
    }

    /// `cell` as the field parsers should see it. Notion writes a relation (an `Author` linked
    /// to a page of another database) as `Frank Herbert (https://www.notion.so/…)`.
    func fieldText(_ cell: String) -> String {
        self == .notion ? NotionCell.removingPageLinks(cell) : cell
    }
}

extension BookField {
    /// Column names (as property keys) that mean a field in hand-made tables and Notion
    /// databases, e.g. Notion's title column `Name` or a `Genre` multi-select.
    static let commonColumnNames: [String: BookField] = {
        let names: [BookField: [String]] = [
            .title: ["name", "book", "book_title"],
            .author: ["authors", "writer", "author_s"],
            .isbn: ["isbn13", "isbn_13", "isbn10", "isbn_10"],
            .status: ["read_status", "reading_status"],
            .currentPage: ["page", "current"],
            .totalPages: ["pages", "page_count", "number_of_pages"],
            .rating: ["my_rating", "stars", "score"],
            .dateAdded: ["added", "added_on"],
            .dateFinished: ["finished", "date_read", "finished_on", "date_completed", "completed"],
            .tags: ["genre", "genres", "shelf", "shelves", "categories", "labels"],
        ]
        var table = Dictionary(uniqueKeysWithValues: BookField.allCases.map { ($0.rawValue, $0) })
        for (field, aliases) in names {
            for alias in aliases { table[alias] = field }
        }
        return table
    }()
}

extension ColumnMap {
    /// Assignments to fields in the order given.
    static func fields(_ pairs: KeyValuePairs<String, BookField>) -> ColumnMap {
        ColumnMap(pairs.map { ColumnAssignment(column: $0.key, target: .field($0.value)) })
    }
}

/// Notion's way of writing links to other pages in CSV cells.
enum NotionCell {
    private static let linkStart = "(https://www.notion.so/"

    static func containsPageLink(_ cell: String) -> Bool {
        cell.contains(linkStart)
    }

    /// `Frank Herbert (https://www.notion.so/Frank-Herbert-8d2c…)` → `Frank Herbert`.
    static func removingPageLinks(_ cell: String) -> String {
        var text = cell
        while let start = text.range(of: linkStart),
              let end = text[start.upperBound...].firstIndex(of: ")") {
            var from = start.lowerBound
            while from > text.startIndex, text[text.index(before: from)] == " " { from = text.index(before: from) }
            text.removeSubrange(from...end)
        }
        return text
    }
}
