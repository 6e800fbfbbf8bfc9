import ArgumentParser
import Foundation
import ShelfModel
import ShelfStore

struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print the Markdown of one item, exactly as its file reads.")

    @OptionGroup var library: LibraryOptions

    @Argument(help: "The item's id, or its path in the library (Books/Dune - Frank Herbert.md).")
    var item: String

    func run() throws {
        let store = try library.open()
        let path = item.hasPrefix("/") ? String(item.dropFirst()) : item
        guard let record = try store.record(id: ItemID(item)) ?? store.record(atPath: path) else {
            throw CLIError("no item with id or path \"\(item)\". `shelf list` shows ids and paths.")
        }
        FileHandle.standardOutput.write(record.content)  // the file's bytes, not a re-encoding
    }
}
