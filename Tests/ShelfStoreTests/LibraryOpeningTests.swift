import Foundation
import TestSupport
import TestTraits
import Testing
@testable import ShelfStore

@Suite("Creating and opening libraries", .scratchFolders)
struct LibraryOpeningTests {
    @Test func createMakesTheDatabaseAndThePlainFileFolders() throws {
        let folder = try TemporaryFolder()
        let libraryURL = folder.child("nested/library")
        let store = try LibraryStore.create(at: libraryURL)
        let files = FileManager.default
        #expect(files.fileExists(atPath: libraryURL.appendingPathComponent("shelf.sqlite").path))
        for kindFolder in ["Books", "Notes"] {
            var isFolder: ObjCBool = false
            #expect(files.fileExists(atPath: store.plainFilesFolder.appendingPathComponent(kindFolder).path,
                                     isDirectory: &isFolder) && isFolder.boolValue)
        }
        #expect(store.plainFilesFolder == libraryURL.appendingPathComponent("files", isDirectory: true))
        #expect(try store.lastSequence() == 0)
        try store.insert(.note(Sample.note()))
        #expect(files.fileExists(atPath: libraryURL.appendingPathComponent("shelf.sqlite-wal").path),
                "the database runs in WAL mode, so readers in other processes never block writers")
    }

    @Test func createOpensAnExistingLibraryWithoutLosingItems() throws {
        let library = try TestLibrary()
        let record = try library.store.insert(.book(Sample.book()))
        let again = try LibraryStore.create(at: library.store.folder)
        #expect(try again.record(id: record.item.id) == record)
        #expect(try LibraryStore.open(at: library.store.folder).record(id: record.item.id) == record)
    }

    @Test func openingAMissingFolderSaysItIsMissing() throws {
        let folder = try TemporaryFolder()
        let missing = folder.child("moved-away")
        #expect(throws: StoreError.libraryMissing(path: missing.path)) { try LibraryStore.open(at: missing) }
        #expect(!FileManager.default.fileExists(atPath: missing.path), "open must not create the folder")
    }

    @Test func openingAFolderWithoutADatabaseSaysItIsNotALibrary() throws {
        let folder = try TemporaryFolder()
        #expect(throws: StoreError.notALibrary(path: folder.url.path)) { try LibraryStore.open(at: folder.url) }
        #expect(!FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("shelf.sqlite").path))
    }

    @Test func aDatabaseFileThatIsNotSQLiteIsUnreadable() throws {
        let folder = try TemporaryFolder()
        let garbage = Data("these are not the pages of a database".utf8)
        try garbage.write(to: folder.url.appendingPathComponent("shelf.sqlite"))
        try expectUnreadable(folder.url) { try LibraryStore.open(at: folder.url) }
        try expectUnreadable(folder.url) { try LibraryStore.create(at: folder.url) }
        #expect(try Data(contentsOf: folder.url.appendingPathComponent("shelf.sqlite")) == garbage,
                "the foreign file must be left alone")
    }

    @Test func aFileInPlaceOfTheFolderIsUnreadable() throws {
        let folder = try TemporaryFolder()
        let file = folder.url.appendingPathComponent("library")
        try Data("x".utf8).write(to: file)
        try expectUnreadable(file) { try LibraryStore.open(at: file) }
        try expectUnreadable(file) { try LibraryStore.create(at: file) }
    }

    @Test func aFolderWithoutPermissionsIsUnreadable() throws {
        let library = try TestLibrary()
        let url = library.store.folder
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: url.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path) }
        try Unprivileged.run {
            try expectUnreadable(url) { try LibraryStore.open(at: url) }
            try expectUnreadable(url) { try LibraryStore.create(at: url) }
        }
    }

    private func expectUnreadable(_ url: URL, _ open: () throws -> LibraryStore,
                                  sourceLocation: SourceLocation = #_sourceLocation) throws {
        let error = #expect(throws: StoreError.self, sourceLocation: sourceLocation) { try open() }
        guard case .libraryUnreadable(let path, let reason)? = error else {
            Issue.record("expected libraryUnreadable, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(path == url.path, sourceLocation: sourceLocation)
        #expect(!reason.isEmpty, sourceLocation: sourceLocation)
    }
}

@Suite("Several processes creating one library", .scratchFolders)
struct ConcurrentCreationTests {
    /// The mount and the CLI may both be the first to touch a new library; each must end up
    /// with the same, fully migrated library and no error.
    @Test func storesCreatingTheSameNewLibraryAtOnceAllSucceed() throws {
        let folder = try TemporaryFolder()
        for attempt in 0..<20 {
            let url = folder.child("library-\(attempt)")
            let outcomes = Outcomes()
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                outcomes.record(Result { try LibraryStore.create(at: url).insert(.note(Sample.note())) })
            }
            let failures = outcomes.failures
            #expect(failures.isEmpty, "attempt \(attempt): \(failures)")
            #expect(try LibraryStore.open(at: url).summaries().count == 4 - failures.count)
        }
    }

    /// Results gathered from concurrent threads.
    private final class Outcomes: @unchecked Sendable {
        private let lock = NSLock()
        private var errors: [String] = []

        func record(_ result: Result<ItemRecord, Error>) {
            if case .failure(let error) = result {
                lock.withLock { errors.append(String(describing: error)) }
            }
        }

        var failures: [String] { lock.withLock { errors } }
    }
}
