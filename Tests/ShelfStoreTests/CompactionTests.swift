import Foundation
import GRDB
import Testing
import ShelfModel
@testable import ShelfStore
import TestSupport
import TestTraits

@Suite(.scratchFolders) struct CompactionTests {
    @Test func compactingDropsFreePagesAndKeepsEveryLiveRecord() throws {
        let library = try TestLibrary()
        let long = String(repeating: "A long line of a long note.\n", count: 1_000)
        let notes = try (0..<40).map { try library.store.insert(.note(Sample.note("Note \($0)", content: long))) }
        for note in notes.prefix(30) { try library.store.write { try $0.trash(id: note.item.id) } }
        #expect(try library.store.emptyTrash() == 30)
        #expect(try freePages(in: library) > 0, "emptying the trash leaves free pages behind")

        try library.store.compact()
        #expect(try freePages(in: library) == 0)
        for note in notes.suffix(10) {
            #expect(try library.store.record(id: note.item.id) == note)
        }
        #expect(try library.store.summaries().count == 10)
    }

    private func freePages(in library: TestLibrary) throws -> Int {
        let database = library.store.folder.appendingPathComponent("shelf.sqlite").path
        return try DatabaseQueue(path: database).read { try Int.fetchOne($0, sql: "PRAGMA freelist_count") ?? 0 }
    }
}
