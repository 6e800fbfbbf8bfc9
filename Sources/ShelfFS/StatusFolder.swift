import Foundation
import FuseKit
import ShelfStore

/// The read-only `/.shelf/` folder: what `shelf status` knows, readable by any tool.
///
/// Files are generated on every open from the item index (and, for errors, the drafts'
/// diagnostics), so they are always current; they are served with `direct_io` so the kernel never
/// caches a stale copy.
struct StatusFolder: Sendable {
    /// The files the folder holds.
    static let fileNames = ["errors.txt", "status.json"]

    let store: LibraryStore
    let index: ItemIndex

    func content(of name: String) throws -> [UInt8] {
        switch name {
        case "errors.txt": return Array(try errorsReport().utf8)
        case "status.json": return try statusJSON()
        default: throw Errno(ENOENT)
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
