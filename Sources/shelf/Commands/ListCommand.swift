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

    @Flag(help: "Print a JSON array of {id, kind, title, path, version, modified, size, favorite, draft}.")
    var json = false

    func run() throws {
        let items = Self.ordered(try library.open().summaries(kind: kind?.itemKind))
        if json {
            try printJSON(items.map(ItemJSON.init))
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

/// The JSON form of an item in `list --json`.
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

    init(_ summary: ItemSummary) {
        id = summary.id.rawValue
        kind = summary.kind.rawValue
        title = summary.title
        path = summary.path
        version = summary.version
        modified = summary.modified
        size = summary.size
        favorite = summary.favorite
        draft = summary.hasDraft
    }
}

/// Prints `value` as pretty, key-sorted JSON with ISO 8601 dates.
func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}
