import ArgumentParser
import Foundation
import ShelfModel
import ShelfStore

struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print the Markdown of one item, exactly as its file reads.",
        discussion: "With --version, an earlier version from the item's history (`shelf history` lists them).")

    @OptionGroup var library: LibraryOptions

    @Argument(help: "The item's id, or its path in the library (Books/Dune - Frank Herbert.md).")
    var item: String

    @Option(help: "Print this earlier version instead of the current one.")
    var version: Int64?

    func run() throws {
        let store = try library.open()
        var record = try store.record(named: item)
        if try Downloads.fetch([record.item.id], of: store) > 0 { record = try store.record(named: record.item.id.rawValue) }
        guard let version else {
            FileHandle.standardOutput.write(record.content)  // the file's bytes, not a re-encoding
            return
        }
        guard let bytes = try store.file(id: record.item.id, version: version) else {
            throw CLIError("\(record.path) has no version \(version) any more. `shelf history \(record.item.id)` lists the versions kept.")
        }
        FileHandle.standardOutput.write(bytes)
    }
}

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List the earlier versions of one item that the library keeps.",
        discussion: """
            Every save keeps the version it replaced; `shelf show ITEM --version N` prints one, \
            `shelf restore ITEM --version N` brings it back. Each line: version, time, size, and how \
            it came to be — edit, import, sync from DEVICE, merge, conflict, restore.
            """)

    @OptionGroup var library: LibraryOptions

    @Argument(help: "The item's id, or its path in the library.")
    var item: String

    func run() throws {
        let store = try library.open()
        let record = try store.record(named: item)
        let origin = try store.origin(of: record.item.id)
        print("\(record.version)\t\(Self.format(record.modified))\t\(record.content.count) bytes\t\(Self.describe(origin))\tcurrent\(record.draftDiagnostics == nil ? "" : ", draft")")
        for version in try store.history(id: record.item.id) {
            print("\(version.version)\t\(Self.format(version.modified))\t\(version.size) bytes\t\(Self.describe(version.origin))\(version.wasDraft ? "\tdraft" : "")")
        }
    }

    /// `edit`, `sync from laptop`, `merge`…; `-` for versions from before Shelf recorded it.
    private static func describe(_ origin: ChangeOrigin?) -> String {
        guard let origin else { return "-" }
        return origin.device.map { "\(origin.reason.rawValue) from \($0)" } ?? origin.reason.rawValue
    }

    private static func format(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateTimeSeparator(.space).time(includingFractionalSeconds: false))
    }
}

struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Bring back an earlier version of an item as its current file.",
        discussion: """
            The version it replaces is kept in the history too, so a restore can itself be undone; \
            a library linked to a cloud sends the restored file to every device. Deleted items \
            come back with `shelf trash restore`.
            """)

    @OptionGroup var library: LibraryOptions

    @Argument(help: "The item's id, or its path.")
    var item: String

    @Option(help: "The version to bring back (`shelf history` lists them).")
    var version: Int64

    func run() throws {
        let store = try library.open()
        let record = try store.record(named: item)
        guard let bytes = try store.file(id: record.item.id, version: version) else {
            throw CLIError("\(record.path) has no version \(version) any more. `shelf history \(record.item.id)` lists the versions kept.")
        }
        let restored = try store.write(as: ChangeOrigin(.restore)) {
            try $0.saveFile(bytes, of: record.item.id, kind: record.item.kind, at: record.path, basedOn: record.version,
                            modified: Date())
        }
        print("Restored version \(version) of \(restored.path) as version \(restored.version).")
    }
}

extension LibraryStore {
    /// The live item a command's argument names: an id, a library path (a leading `/`
    /// allowed), or the item's path inside a mount of this library.
    func record(named argument: String) throws -> ItemRecord {
        var path = argument.hasPrefix("/") ? String(argument.dropFirst()) : argument
        let absolute = URL(fileURLWithPath: argument).standardizedFileURL.path
        for mountpoint in ShelfMounts.mountpoints(ofLibrary: folder) where absolute.hasPrefix(mountpoint + "/") {
            path = String(absolute.dropFirst(mountpoint.count + 1))
        }
        guard let record = try record(id: ItemID(argument)) ?? record(atPath: path) else {
            throw CLIError("no item with id or path \"\(argument)\". `shelf list` shows ids and paths.")
        }
        return record
    }
}
