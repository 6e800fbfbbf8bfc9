import Foundation
import GRDB
import ShelfModel
import ShelfSystem

/// An item a repair moved to the trash, and why.
public struct RepairedItem: Hashable, Sendable {
    public var id: ItemID
    public var path: String
    public var reason: String
}

extension LibraryStore {
    /// Puts right what a cloud could bring before its input was checked: an item at a path no
    /// item may have (outside its kind's folder, `..`, absolute, too long) goes to the trash
    /// with the reason, and the empty folders a mount made for it in the plain-file area go;
    /// a mode with setuid, setgid or sticky keeps its permission bits only. Returns the items
    /// trashed. A mount runs it as it starts, before it builds its index from the paths.
    @discardableResult
    public func repairInvalidItems() throws -> [RepairedItem] {
        let repaired = try write { writer in try writer.repairInvalidItems() }
        for item in repaired { removeEmptyFolders(madeFor: item.path) }
        return repaired
    }

    /// Removes the folders of the plain-file area along `path` (as a mount made them for an item
    /// there, up to its first `..`), deepest first, while they are empty. Never the top folders
    /// of items, never anything outside the library.
    private func removeEmptyFolders(madeFor path: String) {
        var folders: [String] = []
        for component in path.split(separator: "/").dropLast() {
            guard component != ".." else { break }
            guard component != "." else { continue }
            folders.append((folders.last.map { $0 + "/" } ?? "") + component)
        }
        for folder in folders.reversed() where ItemKind(folderName: folder) == nil {
            guard (try? FileEntries.removeEmptyFolder(plainFilesFolder.path + "/" + folder)) != nil else { break }
        }
    }
}

extension StoreWriter {
    /// ``LibraryStore/repairInvalidItems()`` inside one transaction.
    func repairInvalidItems() throws -> [RepairedItem] {
        try db.execute(sql: "UPDATE item SET permissions = permissions & 511 WHERE permissions & ~511 != 0")
        var repaired: [RepairedItem] = []
        for item in try Row.fetchAll(db, sql: "SELECT id, kind, path FROM item WHERE trashed_at IS NULL") {
            let id = ItemID(rawValue: item[ItemColumns.id])
            let path: String = item[ItemColumns.path]
            do {
                try ItemPath.validate(path, for: try ItemQueries.kind(item[ItemColumns.kind], of: id))
            } catch StoreError.invalidPath(_, let reason) {
                let why = "its path \(path.debugDescription) is not valid (\(reason)), as a cloud before Shelf checked its input could leave it"
                try trash(id: id, reason: why)
                repaired.append(RepairedItem(id: id, path: path, reason: why))
            }
        }
        return repaired
    }
}
