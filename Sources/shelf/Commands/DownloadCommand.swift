import ArgumentParser
import Foundation
import ShelfModel
import ShelfStore
import ShelfSync

struct DownloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Bring items' bytes from the cloud now instead of on first read.",
        discussion: "Items are named by id, by library path (Notes/Plan.md) or by their path in a mount of the library.")

    @OptionGroup var library: LibraryOptions

    @Argument(help: "The items to download.")
    var items: [String] = []

    @Flag(help: "Download every item that is not on this device yet.")
    var all = false

    func run() throws {
        let store = try library.open()
        guard all || !items.isEmpty else { throw CLIError("name the items to download, or pass --all.") }
        let ids = all ? try store.placeholderIDs() : try items.map { try store.record(named: $0).item.id }
        let count = try Downloads.fetch(ids, of: store)
        print("Downloaded \(count) item\(count == 1 ? "" : "s").")
    }
}

/// Placeholders filled for a command that needs their bytes (show, export, unlink).
enum Downloads {
    /// Downloads those of `ids` that are placeholders (every placeholder when nil); returns how
    /// many. Each failure is listed; the command fails after trying them all.
    @discardableResult
    static func fetch(_ ids: [ItemID]? = nil, of store: LibraryStore) throws -> Int {
        let wanted = try ids.map { try $0.filter { try store.downloadState(of: $0) != nil } } ?? store.placeholderIDs()
        guard !wanted.isEmpty else { return 0 }
        guard let link = try store.cloudLink() else {
            throw CLIError("\(wanted.count) item\(wanted.count == 1 ? " is" : "s are") not downloaded and the library is not linked to a cloud; link it again with `shelf cloud link DIR` to bring them.")
        }
        let engine = SyncEngine(store: store, cloud: try CloudLocation.backend(link.location))
        var failures: [String] = []
        for id in wanted {
            do {
                try engine.download(id)
            } catch {
                failures.append("\(try store.summary(id: id)?.path ?? id.rawValue): \(error)")
            }
        }
        guard failures.isEmpty else {
            throw CLIError("could not download \(failures.count) of \(wanted.count) items:\n  " + failures.joined(separator: "\n  "))
        }
        return wanted.count
    }
}
