import Foundation
import GRDB
import Testing
import ShelfModel
@testable import ShelfStore
import TestSupport
import TestTraits

@Suite("Change feed and several stores on one library", .scratchFolders)
struct ChangeFeedTests {
    @Test func theFeedNumbersChangesInOrderAndPagesByLimit() throws {
        let library = try TestLibrary()
        let book = try library.store.insert(.book(Sample.book()))
        try library.store.update(Item.book(Sample.book("Dune Messiah")).withID(book.item.id))
        let moved = try library.store.move(id: book.item.id, to: "Books/Messiah.md")
        try library.store.trash(id: book.item.id)

        let changes = try library.store.changes(after: 0)
        #expect(changes.map(\.sequence) == [1, 2, 3, 4])
        #expect(changes.map(ChangeEntry.init) == [
            ChangeEntry(.added, book.item.id, book.path),
            ChangeEntry(.updated, book.item.id, book.path),
            ChangeEntry(.updated, book.item.id, moved.path, previousPath: book.path),
            ChangeEntry(.removed, book.item.id, moved.path),
        ])
        #expect(try library.store.lastSequence() == 4)
        #expect(try library.store.changes(after: 1, limit: 2).map(\.sequence) == [2, 3])
        #expect(try library.store.changes(after: 4).isEmpty)
    }

    @Test func aSecondStoreOnTheSameFolderSeesTheFirstOnesChanges() throws {
        let library = try TestLibrary()
        let other = try LibraryStore.open(at: library.store.folder)
        let start = try other.lastSequence()

        let record = try library.store.insert(.note(Sample.note()))
        #expect(try other.changeEntries(after: start) == [ChangeEntry(.added, record.item.id, record.path)])
        #expect(try other.record(id: record.item.id) == record)

        let seen = try other.lastSequence()
        let edited = try other.update(Item.note(Sample.note(content: "from the CLI")).withID(record.item.id),
                                      basedOn: record.version)
        #expect(try library.store.changeEntries(after: seen) == [ChangeEntry(.updated, record.item.id, record.path)])
        #expect(try library.store.record(id: record.item.id) == edited)
        #expect(throws: StoreError.versionConflict(id: record.item.id, expected: record.version, actual: edited.version)) {
            try library.store.update(record.item, basedOn: record.version)
        }
    }

    @Test func twoStoresWritingAtOnceWaitForEachOtherInsteadOfFailing() async throws {
        let library = try TestLibrary()
        let stores = [library.store, try LibraryStore.open(at: library.store.folder)]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in stores.enumerated() {
                group.addTask {
                    for number in 0..<40 {
                        try store.insert(.note(Sample.note("Writer \(index) note \(number)")))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try library.store.summaries().count == 80)
        #expect(try library.store.changes(after: 0).map(\.sequence) == Array(1...80))
    }
}

@Suite("Another process holding the write lock", .scratchFolders)
struct CrossProcessLockTests {
    static let sqliteShell = "/usr/bin/sqlite3"

    /// A real second process (the sqlite3 shell) holds a write transaction for a second; a
    /// write meanwhile waits for it (busy timeout) instead of failing with "database is locked".
    @Test
    func aWriteWaitsForAnotherProcesssTransaction() throws {
        let library = try TestLibrary()
        let holder = try Self.holdWriteLock(of: library.store.folder, seconds: 1)
        defer { holder.waitUntilExit() }

        let clock = ContinuousClock()
        let start = clock.now
        let record = try library.store.insert(.note(Sample.note()))
        #expect(clock.now - start > .milliseconds(300), "the insert should have waited for the other process")
        #expect(try library.store.record(id: record.item.id) == record)
    }

    /// Past the busy timeout the caller gets `libraryBusy`, naming the library, not an SQLite error.
    @Test
    func aWriteThatWaitsTooLongReportsTheLibraryBusy() throws {
        let library = try TestLibrary()
        let impatient = try LibraryStore.open(LibraryFolder(url: library.store.folder, busyTimeout: 0.1))
        let holder = try Self.holdWriteLock(of: library.store.folder, seconds: 1)
        defer { holder.waitUntilExit() }

        #expect(throws: StoreError.libraryBusy(path: library.store.folder.path)) {
            try impatient.insert(.note(Sample.note()))
        }
    }

    /// Starts the sqlite3 shell on the library's database and returns once it holds the write
    /// lock, which it keeps for `seconds`.
    private static func holdWriteLock(of library: URL, seconds: Int) throws -> Process {
        try #require(FileManager.default.isExecutableFile(atPath: sqliteShell),
                     "the sqlite3 shell is missing: run scripts/install-deps")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: sqliteShell)
        shell.arguments = [library.appendingPathComponent("shelf.sqlite").path]
        let input = Pipe()
        let output = Pipe()
        shell.standardInput = input
        shell.standardOutput = output
        try shell.run()
        input.fileHandleForWriting.write(Data("BEGIN IMMEDIATE;\nSELECT 'locked';\n.shell sleep \(seconds)\nCOMMIT;\n".utf8))
        try input.fileHandleForWriting.close()
        let firstLine = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard firstLine.hasPrefix("locked") else {
            shell.waitUntilExit()
            throw LockNotTaken(output: firstLine)
        }
        return shell
    }

    struct LockNotTaken: Error { var output: String }
}

@Suite("Durability", .scratchFolders)
struct DurabilityTests {
    /// After `synchronize`, the database file alone — without its write-ahead log, as if the
    /// log had never reached the disk — holds the commit.
    @Test func synchronizeMovesCommitsIntoTheDatabaseFile() throws {
        let library = try TestLibrary()
        let book = try library.store.insert(.book(Sample.book("Durable")))
        let copy = library.scratch.child("copy")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        func itemsInFileAlone() throws -> Int {
            let target = copy.appendingPathComponent("shelf.sqlite")
            try? FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(at: library.store.folder.appendingPathComponent("shelf.sqlite"), to: target)
            return try DatabaseQueue(path: target.path).read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE id = ?", arguments: [book.item.id.rawValue]) ?? -1
            }
        }
        // Before: the file alone lacks the item (or even the schema, which is in the log too).
        #expect(((try? itemsInFileAlone()) ?? 0) == 0, "the commit is still only in the log")
        try library.store.synchronize()
        #expect(try itemsInFileAlone() == 1)
    }
}

@Suite("Listing cost", .scratchFolders)
struct ListingPlanTests {
    /// A mount of 100,000 items starts by listing them all; the listing must come from the
    /// covering index alone, never from the table rows that carry every file's bytes.
    @Test func summariesAreReadFromACoveringIndex() throws {
        let library = try TestLibrary()
        try library.store.insert(.book(Sample.book()))
        let plan = try DatabaseQueue(path: library.store.folder.appendingPathComponent("shelf.sqlite").path).read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT \(ItemQueries.summaryColumns) FROM item WHERE trashed_at IS NULL ORDER BY path")
                .map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("COVERING INDEX item_live_summary") }, "\(plan)")
    }
}
