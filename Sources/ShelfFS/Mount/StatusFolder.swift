import Foundation
import Synchronization
import FuseKit
import ShelfStore

/// The read-only `/.shelf/` folder: what `shelf status` knows, readable by any tool that asks
/// for it by path. It is not listed in the root, so tools that walk the tree (git, tar, rsync,
/// Syncthing) never pick up files whose content changes with every save.
///
/// Files are generated from the item index (and, for errors, the drafts' diagnostics) whenever
/// the kernel asks for their attributes, which it does before every read (they are never
/// cached). Reads are then served from that snapshot, so the size `stat` gave and the bytes a
/// read returns always agree; the modification time changes only when the bytes do, so the
/// kernel drops cached pages exactly when they are stale.
final class StatusFolder: Sendable {
    /// The files the folder holds.
    static let fileNames = ["errors.txt", "status.json", "sync.json"]

    struct Snapshot {
        var bytes: [UInt8]
        var modified: FileTime
    }

    let store: LibraryStore
    let index: ItemIndex
    /// The engine of a library linked to a cloud, for `sync.json`.
    let sync: (any MountSync)?
    private let snapshots = Mutex<[String: Snapshot]>([:])
    /// The folder's own times: its entries never change, so neither do they while mounted.
    let folderTime = FileTime.now

    init(store: LibraryStore, index: ItemIndex, sync: (any MountSync)?) {
        self.store = store
        self.index = index
        self.sync = sync
    }

    /// Generates `name` anew and keeps it as the snapshot reads are served from.
    func refreshedSnapshot(of name: String) throws -> Snapshot {
        let bytes = try content(of: name)
        return snapshots.withLock { snapshots in
            if let kept = snapshots[name], kept.bytes == bytes { return kept }
            let fresh = Snapshot(bytes: bytes, modified: .now)
            snapshots[name] = fresh
            return fresh
        }
    }

    /// The snapshot of `name` last described to the kernel (generated now if there is none).
    func snapshot(of name: String) throws -> Snapshot {
        if let kept = snapshots.withLock({ $0[name] }) { return kept }
        return try refreshedSnapshot(of: name)
    }

    func content(of name: String) throws -> [UInt8] {
        switch name {
        case "errors.txt": return Array(try errorsReport().utf8)
        case "status.json": return try statusJSON()
        case "sync.json": return Array(try sync?.statusJSON() ?? Data("null\n".utf8))
        default: throw Errno.noEntry
        }
    }

    /// One block per item with a pending invalid save: its path, then one diagnostic a line.
    private func errorsReport() throws -> String {
        var report = ""
        for summary in index.itemsWithDrafts() {
            guard let record = try store.record(id: summary.id), let diagnostics = record.draftDiagnostics else { continue }
            report += record.path + "\n"
            for diagnostic in diagnostics { report += "  \(diagnostic)\n" }
        }
        return report
    }

    private struct Status: Encodable {
        var books: Int
        var notes: Int
        var drafts: [String]
        var lastSequence: Int64
    }

    private func statusJSON() throws -> [UInt8] {
        let counts = index.counts()
        let status = Status(books: counts.books, notes: counts.notes,
                            drafts: index.itemsWithDrafts().map(\.path), lastSequence: try store.lastSequence())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(status)) + [UInt8(ascii: "\n")]
    }
}
