import Foundation
import Testing
import TestSupport
import TestTraits
import ShelfModel
@testable import ShelfStore

/// Libraries that a cloud filled before Shelf checked what it brings: items at paths no item
/// may have, and setuid modes, are put right when a mount starts.
@Suite(.scratchFolders) struct RepairTests {
    static let badPaths = [
        "../../../../../tmp/x/pwned-note.md", "Notes/../../escape.md", "/tmp/x/absolute.md",
        "Notes/ok/../../../../../../tmp/x/deep.md",
    ]

    @Test func itemsAtInvalidPathsGoToTheTrashWithTheReasonAndTheirFoldersGo() throws {
        let library = try TestLibrary()
        let store = library.store
        let good = try store.insert(.note(Note(title: "Good")))
        var bad: [ItemID] = []
        for (index, path) in Self.badPaths.enumerated() {
            let record = try store.insert(.note(Note(title: "Pwned \(index)")))
            try LibraryDatabase.execute("UPDATE item SET path = ? WHERE id = ?", [path, record.item.id.rawValue],
                                        inLibrary: store.folder)
            bad.append(record.item.id)
        }
        try LibraryDatabase.execute("UPDATE item SET permissions = 2541 WHERE id = ?", [good.item.id.rawValue], inLibrary: store.folder)
        // The folders an older mount made for them in the plain-file area.
        let plain = store.plainFilesFolder
        for folder in ["Notes/ok", "tmp/x"] {
            try FileManager.default.createDirectory(at: plain.appendingPathComponent(folder), withIntermediateDirectories: true)
        }

        let repaired = try store.repairInvalidItems()
        #expect(Set(repaired.map(\.id)) == Set(bad))
        #expect(try store.summaries().map(\.path) == [good.path])
        #expect(try store.record(id: good.item.id)?.permissions == 0o755, "setuid (0o4755) keeps its permission bits only")
        let trashed = try store.trashedItems()
        #expect(Set(trashed.map(\.id)) == Set(bad))
        for item in trashed {
            #expect(item.reason?.contains("is not valid") == true && item.reason?.contains(item.originalPath.debugDescription) == true,
                    "\(String(describing: item.reason))")
        }
        for folder in ["Notes/ok", "tmp/x", "tmp"] {
            #expect(!FileManager.default.fileExists(atPath: plain.appendingPathComponent(folder).path), "\(folder)")
        }
        #expect(FileManager.default.fileExists(atPath: plain.appendingPathComponent("Notes").path))
        #expect(try store.repairInvalidItems().isEmpty, "a second pass finds nothing")

        // Restored, an item gets the path its title gives, and no reason any more.
        let restored = try store.restore(id: bad[0])
        #expect(restored.path == "Notes/Pwned 0.md")
        #expect(try store.trashedItems().contains { $0.id == bad[0] } == false)
    }

    @Test func pathsTheStoreRefuses() throws {
        let library = try TestLibrary()
        for path in Self.badPaths + ["Notes/" + String(repeating: "a", count: 256) + ".md", "Notes/tab\there.md",
                                     "Notes/" + String(repeating: "a/", count: 2100) + "x.md"] {
            #expect(throws: StoreError.self, "\(path.prefix(60))") {
                try library.store.insert(.note(Note(title: "x")), path: path)
            }
        }
        #expect(try library.store.insert(.note(Note(title: "x")), path: "Notes/" + String(repeating: "a", count: 252) + ".md").path.count == 261)
    }
}
