import Foundation
import ShelfModel

/// A book field an import column can fill. Raw values are the names `--map` accepts (the
/// frontmatter keys).
public enum BookField: String, CaseIterable, Sendable {
    case title, author, isbn, status
    case currentPage = "current_page"
    case totalPages = "total_pages"
    case rating
    case dateAdded = "date_added"
    case dateFinished = "date_finished"
    case tags
    case sourceID = "source_id"
}

/// Where one column's values go: into a book field, or kept verbatim as a frontmatter property.
public enum ColumnTarget: Hashable, Sendable {
    case field(BookField)
    case property(String)
}

/// One column and where its values go.
public struct ColumnAssignment: Hashable, Sendable {
    /// The column name as written by the user or the format (matched ignoring case and spaces).
    public var column: String
    public var target: ColumnTarget
}

/// Column → target assignments, from `--map COLUMN=field` arguments or a format's defaults.
///
/// Several columns may feed one field: for a list field (`tags`) their values are joined; for
/// any other field the first non-empty column wins and the others are kept as properties, so
/// nothing is dropped (Goodreads' `ISBN` then `ISBN13`).
public struct ColumnMap: Hashable, Sendable {
    /// Assignments in priority order.
    public private(set) var assignments: [ColumnAssignment]

    /// Frontmatter keys an import may not write as a kept property: the book's own fields and
    /// its identity. A column that would land on one of these is prefixed with the format name.
    static let reservedKeys: Set<String> = Set(BookField.allCases.map(\.rawValue)).union(["id"])

    public init(_ assignments: [ColumnAssignment] = []) {
        self.assignments = assignments
    }

    /// Parses `--map` arguments such as `Book Title=title` or `Shelf=shelf_name`.
    ///
    /// The field is a `BookField` name or any other snake_case name, which keeps the column as
    /// a property of that name. The column may itself contain `=`; the last `=` separates.
    public init(arguments: [String]) throws {
        self.init(try arguments.map(ColumnMap.parse))
    }

    private static func parse(_ argument: String) throws -> ColumnAssignment {
        guard let separator = argument.lastIndex(of: "=") else {
            throw ImportError.badMap(argument: argument, reason: "it has no '=' between the column and the field")
        }
        let column = argument[..<separator].trimmed()
        let name = argument[argument.index(after: separator)...].trimmed()
        guard !column.isEmpty else {
            throw ImportError.badMap(argument: argument, reason: "the column name before '=' is empty")
        }
        guard isSnakeCase(name) else {
            throw ImportError.badMap(argument: argument, reason: "\"\(name)\" is not a field name (fields: \(BookField.allCases.map(\.rawValue).joined(separator: ", ")); any other snake_case name keeps the column as a property)")
        }
        if let field = BookField(rawValue: name) { return ColumnAssignment(column: column, target: .field(field)) }
        guard !reservedKeys.contains(name) else {
            throw ImportError.badMap(argument: argument, reason: "\"\(name)\" is the item's identity, which Shelf assigns itself")
        }
        return ColumnAssignment(column: column, target: .property(name))
    }

    private static func isSnakeCase(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

    /// `self`'s assignments first, then those of `defaults` for columns `self` does not name:
    /// the user's `--map` overrides a format's defaults column by column.
    func overriding(_ defaults: ColumnMap) -> ColumnMap {
        let named = Set(assignments.map { ColumnMap.normalized($0.column) })
        return ColumnMap(assignments + defaults.assignments.filter { !named.contains(ColumnMap.normalized($0.column)) })
    }

    /// Matching of column names ignores case and surrounding spaces.
    static func normalized(_ column: String) -> String {
        column.trimmed().lowercased()
    }
}
