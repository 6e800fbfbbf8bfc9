import Foundation
import GRDB
import ShelfModel
import TestSupport
import TestTraits
import Testing
@testable import ShelfStore

/// A library made by an earlier Shelf opens with every row read as it was written: the
/// migrations bring the schema up to date, and each read takes its columns by name.
@Suite(.scratchFolders) struct MigrationTests {
    /// The migrations such a library had: the one before the newest, and one from before the
    /// link said what it waits for and the trash said why.
    @Test(arguments: ["v10: kept versions share their bytes in chunks", "v7: depth of cloud changes in their item's history"])
    func aLibraryOfAnEarlierSchemaOpensWithEveryRowReadAsWritten(madeUpTo migration: String) throws {
        let folder = try TemporaryFolder()
        let library = folder.child("library")
        try FileManager.default.createDirectory(at: library.appendingPathComponent("files/Books"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: library.appendingPathComponent("files/Notes"), withIntermediateDirectories: true)
        let note = Item.note(Sample.note("Old plan", content: "Written by an older Shelf.\n"))
        let content = Data("---\ntitle: Old plan\n---\nWritten by an older Shelf.\n".utf8)
        let modified = Date(timeIntervalSinceReferenceDate: 800_000_000.25)
        let linked = Date(timeIntervalSinceReferenceDate: 790_000_000.5)
        do {
            let earlier = try DatabaseQueue(path: library.appendingPathComponent("shelf.sqlite").path)
            try Schema.migrator.migrate(earlier, upTo: migration)
            try earlier.write { db in
                try db.execute(sql: """
                    INSERT INTO item (serial, id, kind, title, path, version, modified, record, content, size,
                                      draft_diagnostics, favorite, source_id, trashed_at, permissions)
                    VALUES (7, ?, 'note', 'Old plan', 'Notes/Old plan.md', 3, ?, ?, ?, ?, NULL, 1, NULL, NULL, 416)
                    """, arguments: [note.id.rawValue, modified.storedSeconds, try RecordCoding().encode(note), content, content.count])
                try db.execute(sql: """
                    INSERT INTO item_history (item_id, version, modified, content, was_draft) VALUES (?, 2, ?, ?, 0)
                    """, arguments: [note.id.rawValue, modified.addingTimeInterval(-60).storedSeconds, Data("before\n".utf8)])
                try db.execute(sql: """
                    INSERT INTO cloud_link (singleton, location, cloud, device, device_name, cursor, next_batch, pushed_sequence,
                                            linked, last_sync, offline_since, error, download_all, cache_limit)
                    VALUES (1, '/clouds/home', 'cloud-1', 'device-1', 'laptop', ?, 5, 9, ?, NULL, NULL, 'was offline', 1, 4096)
                    """, arguments: [Data("{}".utf8), linked.storedSeconds])
            }
        }

        let store = try LibraryStore.open(at: library)
        let record = try #require(try store.record(id: note.id))
        #expect(record.item == note && record.content == content && record.path == "Notes/Old plan.md")
        #expect(record.version == 3 && record.modified == modified && record.permissions == 416)
        let summary = try #require(try store.summaries().first)
        #expect(summary.id == note.id && summary.kind == .note && summary.title == "Old plan" && summary.size == content.count)
        #expect(summary.favorite && !summary.hasDraft && !summary.isPlaceholder && summary.permissions == 416)
        #expect(try store.history(id: note.id).map(\.version) == [2])
        #expect(try store.file(id: note.id, version: 2) == Data("before\n".utf8))
        let link = try #require(try store.cloudLink())
        #expect(link.location == "/clouds/home" && link.device == "device-1" && link.deviceName == "laptop")
        #expect(link.nextBatch == 5 && link.pushedSequence == 9 && link.linked == linked && link.error == "was offline")
        #expect(link.downloadAll && link.cacheLimit == 4096 && link.waiting == nil && link.lastSync == nil)

        // The migrated library takes new rows in the columns its newer migrations added.
        try store.trash(id: note.id)
        #expect(try store.trashedItems().map(\.id) == [note.id])
    }
}
