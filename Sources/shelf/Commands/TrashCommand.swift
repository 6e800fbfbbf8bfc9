import ArgumentParser
import Foundation
import ShelfModel
import ShelfStore

struct TrashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trash",
        abstract: "List, restore or empty the trash of deleted items.",
        subcommands: [List.self, Restore.self, Empty.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List deleted items.")
        @OptionGroup var library: LibraryOptions
        @Flag(help: "Print a JSON array of {id, kind, title, path, trashed, reason}.")
        var json = false

        struct TrashJSON: Encodable {
            var id, kind, title, path: String
            var trashed: Date
            /// Why Shelf trashed it (a repair); absent for a delete.
            var reason: String?
        }

        func run() throws {
            let items = try library.open().trashedItems()
            if json {
                try printJSON(items.map { TrashJSON(id: $0.id.rawValue, kind: $0.kind.rawValue, title: $0.title, path: $0.originalPath, trashed: $0.trashedAt, reason: $0.reason) })
            } else if items.isEmpty {
                print("The trash is empty.")
            } else {
                for item in items { print("\(item.id)  \(item.originalPath)" + (item.reason.map { "  (\($0))" } ?? "")) }
            }
        }
    }

    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Bring a deleted item back at its old path.")
        @OptionGroup var library: LibraryOptions
        @Argument(help: "The item's id (see `shelf trash list`).")
        var id: String

        func run() throws {
            let store = try library.open()
            guard try store.trashedItems().contains(where: { $0.id.rawValue == id }) else {
                throw CLIError("no item with id \(id) in the trash. `shelf trash list` shows what can be restored.")
            }
            let record = try store.write { try $0.restore(id: ItemID(id)) }
            print("Restored \(record.path)")
        }
    }

    struct Empty: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete the items in the trash for good.")
        @OptionGroup var library: LibraryOptions

        func run() throws {
            let count = try library.open().write { try $0.emptyTrash() }
            print("Deleted \(count) item\(count == 1 ? "" : "s") for good.")
        }
    }
}
