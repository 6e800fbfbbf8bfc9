import ArgumentParser
import Foundation
import ShelfModel
import ShelfStore

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List books and notes.",
        discussion: "Books are listed by path; notes favorites first, then the most recently modified.")

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case books, notes
        var itemKind: ItemKind { self == .books ? .book : .note }
    }

    @OptionGroup var library: LibraryOptions

    @Argument(help: "Only books or only notes.")
    var kind: Kind?

    @Flag(help: """
        Print a JSON array of {id, kind, title, path, version, modified, size, favorite, draft, tags};         books also have author, isbn, status, rating, current_page, total_pages, date_added, date_finished when set.
        """)
    var json = false

    func run() throws {
        let store = try library.open()
        let items = Self.ordered(try store.summaries(kind: kind?.itemKind))
        if json {
            try printJSON(try items.map { ItemJSON($0, item: try store.record(id: $0.id)?.item) })
        } else {
            for item in items {
                let marks = (item.favorite ? "★ " : "") + (item.hasDraft ? "[invalid save pending] " : "")
                print("\(item.id)  \(marks)\(item.path)")
            }
        }
    }

    /// Books by path; notes favorites first, then newest modification first.
    static func ordered(_ items: [ItemSummary]) -> [ItemSummary] {
        items.sorted { a, b in
            if a.kind != b.kind { return a.kind == .book }
            if a.kind == .book { return a.path < b.path }
            if a.favorite != b.favorite { return a.favorite }
            if a.modified != b.modified { return a.modified > b.modified }
            return a.path < b.path
        }
    }
}

/// The JSON form of an item in `list --json`: the listing's fields and, for scripts that
/// sort or filter a reading list, the book's own fields (absent when not set).
struct ItemJSON: Encodable {
    var id: String
    var kind: String
    var title: String
    var path: String
    var version: Int64
    var modified: Date
    var size: Int
    var favorite: Bool
    var draft: Bool
    var tags: [String] = []
    var author: String?
    var isbn: String?
    var status: String?
    var rating: Double?
    var currentPage: Int?
    var totalPages: Int?
    var dateAdded: CalendarDate?
    var dateFinished: CalendarDate?

    enum CodingKeys: String, CodingKey {
        case id, kind, title, path, version, modified, size, favorite, draft, tags, author, isbn, status, rating
        case currentPage = "current_page", totalPages = "total_pages", dateAdded = "date_added", dateFinished = "date_finished"
    }

    init(_ summary: ItemSummary, item: Item?) {
        id = summary.id.rawValue
        kind = summary.kind.rawValue
        title = summary.title
        path = summary.path
        version = summary.version
        modified = summary.modified
        size = summary.size
        favorite = summary.favorite
        draft = summary.hasDraft
        switch item {
        case .book(let book):
            tags = book.tags
            author = book.author
            isbn = book.isbn
            status = book.status?.rawValue
            rating = book.rating
            currentPage = book.currentPage
            totalPages = book.totalPages
            dateAdded = book.dateAdded
            dateFinished = book.dateFinished
        case .note(let note):
            tags = note.tags
        case nil:
            break
        }
    }
}

/// Prints `value` as pretty, key-sorted JSON with ISO 8601 dates.
func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}
