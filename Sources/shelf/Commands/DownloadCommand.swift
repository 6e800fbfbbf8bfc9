import ArgumentParser
import Foundation
import ShelfModel
import ShelfStore
import ShelfSync
import ShelfSystem

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

struct PinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Keep items downloaded on this device whatever the cache budget (downloading them now).",
        discussion: "In a mount, `setfattr -n user.shelf.pin -v 1 FILE` does the same.")
    @OptionGroup var target: LinkedItems

    func run() throws { try target.pin(true) }
}

struct UnpinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpin", abstract: "Let the cache budget evict items again.")
    @OptionGroup var target: LinkedItems

    func run() throws { try target.pin(false) }
}

struct EvictCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evict",
        abstract: "Free the room of downloaded items whose bytes the cloud holds; they download again on the next read.",
        discussion: "Pinned items, items with changes not uploaded yet, and items a program holds locked are refused (EBUSY), and nothing else changes.")
    @OptionGroup var target: LinkedItems

    func run() throws {
        let (store, engine) = try DownloadControl.open(target.library)
        let items = target.items
        let mounts = ShelfMounts.mountpoints(ofLibrary: store.folder)
        let records = try items.map { try store.record(named: $0) }
        engine.considerBusy {
            Set(records.filter { record in mounts.contains { KernelFileLocks.isLocked($0 + "/" + record.path) } }
                .map(\.item.id))
        }
        var refused: [String] = []
        for record in records {
            do {
                try engine.evict(record.item.id)
            } catch let error as EvictError {
                refused.append("\(record.path): \(error)")
            }
        }
        guard refused.isEmpty else {
            throw CLIError("EBUSY: \(refused.count) of \(items.count) not evicted:\n  " + refused.joined(separator: "\n  "))
        }
        print("Evicted \(items.count) item\(items.count == 1 ? "" : "s"); they download again when read.")
    }
}

/// The items a download-control command (`pin`, `unpin`, `evict`) acts on.
struct LinkedItems: ParsableArguments {
    @OptionGroup var library: LibraryOptions
    @Argument(help: "Items by id, library path or path in a mount.")
    var items: [String]

    /// Pins the items (or unpins them: the cache budget may evict them again) and says how many.
    func pin(_ pinned: Bool) throws {
        let (store, engine) = try DownloadControl.open(library)
        for item in items { try engine.pin(try store.record(named: item).item.id, pinned) }
        print("\(pinned ? "Pinned" : "Unpinned") \(items.count) item\(items.count == 1 ? "" : "s").")
    }
}

/// The store and sync engine of a linked library, for the download-control commands.
enum DownloadControl {
    static func open(_ library: LibraryOptions) throws -> (LibraryStore, SyncEngine) {
        let store = try library.open()
        guard let engine = try SyncEngine.linked(store) else {
            throw CLIError("this library is not linked to a cloud, so every item is on this device; link it with `shelf cloud link DIR`.")
        }
        return (store, engine)
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
        guard let engine = try SyncEngine.linked(store) else {
            throw CLIError("\(wanted.count) item\(wanted.count == 1 ? " is" : "s are") not downloaded and the library is not linked to a cloud; link it again with `shelf cloud link DIR` to bring them.")
        }
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
