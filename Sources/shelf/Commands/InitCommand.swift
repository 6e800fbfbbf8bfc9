import ArgumentParser
import Foundation
import ShelfStore

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a library (or select an existing one) and remember it as the default.")

    @Argument(help: "The library folder (default: $HOME/Shelf).")
    var path: String?

    @Flag(help: "Create or select the library without making it the default.")
    var noRemember = false

    func run() throws {
        let folder = URL(fileURLWithPath: path ?? (ShelfConfig.homeFolder + "/Shelf")).standardizedFileURL
        let store = try LibraryStore.create(at: folder)
        if !noRemember {
            var config = try ShelfConfig.load()
            config.library = store.folder.path
            try config.save()
        }
        let counts = try store.summaries().reduce(into: (books: 0, notes: 0)) { counts, item in
            if item.kind == .book { counts.books += 1 } else { counts.notes += 1 }
        }
        print("Library at \(store.folder.path): \(counts.books) books, \(counts.notes) notes.\(noRemember ? "" : " It is now the default library.")")
    }
}
