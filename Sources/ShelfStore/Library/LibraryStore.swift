import Foundation
import GRDB
import ShelfModel
import ShelfMarkdown

/// A library: one folder holding `shelf.sqlite` (records, versions, saved source text, trash,
/// change feed, full-text index) and `files/` (the plain-file area of the mount).
///
/// Thread-safe; any number of processes may open the same library (SQLite WAL). Reads see the
/// last committed state, whichever process committed it.
public final class LibraryStore: Sendable {
    /// The library folder.
    public let folder: URL

    /// Where the mount keeps everything that is not an item file (`.obsidian/`, attachments,
    /// editor temp files) and the user's folders, as ordinary files.
    public var plainFilesFolder: URL { layout.plainFiles }

    private let database: DatabasePool

    init(folder: URL, database: DatabasePool) {
        self.folder = folder
        self.database = database
    }

    /// Creates a library in `folder` (created if missing), or opens the one already there.
    public static func create(at folder: URL) throws -> LibraryStore {
        try create(LibraryFolder(url: folder))
    }

    /// Opens an existing library; `StoreError.libraryMissing` / `.notALibrary` /
    /// `.libraryUnreadable` otherwise.
    public static func open(at folder: URL) throws -> LibraryStore {
        try open(LibraryFolder(url: folder))
    }

    static func create(_ layout: LibraryFolder) throws -> LibraryStore {
        try layout.createFolder()
        try layout.createPlainFileFolders()
        return LibraryStore(folder: layout.url, database: try layout.openDatabase())
    }

    static func open(_ layout: LibraryFolder) throws -> LibraryStore {
        try layout.checkExistingLibrary()
        let database = try layout.openDatabase()
        try layout.createPlainFileFolders()
        return LibraryStore(folder: layout.url, database: database)
    }

    // MARK: Reading

    public func record(id: ItemID) throws -> ItemRecord? {
        try read { try $0.liveRecord(id: id) }
    }
    public func record(atPath path: String) throws -> ItemRecord? {
        try read { try $0.liveRecord(atPath: path) }
    }
    public func summary(id: ItemID) throws -> ItemSummary? {
        try read { try $0.liveSummary(id: id) }
    }
    /// Every live item (not trashed), optionally of one kind, ordered by path.
    public func summaries(kind: ItemKind? = nil) throws -> [ItemSummary] {
        try read { try $0.liveSummaries(kind: kind) }
    }

    /// An item's file bytes and the version they belong to: what reading its file needs,
    /// without the cost of decoding the record. An item in the trash gives the bytes it showed
    /// when it was deleted (a program may still be reading the file it had open).
    public func file(id: ItemID) throws -> (version: Int64, content: Data)? {
        try read { try $0.file(id: id) }
    }

    /// Up to `count` bytes of item `id`'s file at `offset`, with their version and the file's
    /// size, without reading the rest of the file.
    public func fileRange(id: ItemID, offset: Int, count: Int) throws -> (version: Int64, size: Int, bytes: Data)? {
        try read { try $0.fileRange(id: id, offset: offset, count: count) }
    }

    /// Calls `body` with the path and file bytes of every live item, in path order, inside one
    /// read transaction (a consistent snapshot, however long `body` takes).
    public func forEachFile(_ body: (_ path: String, _ content: Data) throws -> Void) throws {
        try read { try $0.forEachLiveFile(body) }
    }

    private func read<T>(_ body: (ItemQueries) throws -> T) throws -> T {
        try readDatabase { try body(ItemQueries(db: $0)) }
    }

    func readDatabase<T>(_ body: (Database) throws -> T) throws -> T {
        try translatingDatabaseErrors { try database.read(body) }
    }

    /// Reports a busy, full, read-only or damaged database as the `StoreError` that names the
    /// library and the fix; other database errors are bugs and pass unchanged.
    private func translatingDatabaseErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            throw StoreError(error, library: folder) ?? error
        }
    }

    // MARK: Writing

    /// Runs `body` in one write transaction (imports use it: 10,000 rows, one commit). If
    /// `body` throws, nothing of it is kept. Other processes wait for the commit; inside
    /// `body`, read and write through the writer only: GRDB traps on a nested database access.
    /// `origin`: what the versions its writes make are recorded as (`shelf history`).
    public func write<T>(as origin: ChangeOrigin = .edit, _ body: (StoreWriter) throws -> T) throws -> T {
        try translatingDatabaseErrors {
            try database.write { db in try TransactionMarker.inside { try body(StoreWriter(db: db, origin: origin)) } }
        }
    }

    /// Whether this thread is inside a write transaction. The mount's locks may be taken only
    /// outside one (a transaction that waits for a mount lock can deadlock with a save that
    /// waits for the store); debug builds check it where those locks are taken.
    public static var isWritingOnThisThread: Bool { TransactionMarker.isInside }

    /// Rewrites the database file in order (SQLite's `VACUUM`), dropping free pages.
    ///
    /// A big import grows the item table and its listing index a page at a time, interleaved,
    /// wherever there is room; a mount's start-up then reads the whole listing index from a
    /// cold cache in scattered reads. Rewritten, the index comes in one forward sweep: a
    /// 100,000-item library mounts in about 0.6 s instead of 1 s. Costs about 2 s per 100,000
    /// items, so it is for after big imports, while no mount is running (a mount would see the
    /// whole file go through the log).
    public func compact() throws {
        try translatingDatabaseErrors { try database.writeWithoutTransaction { try $0.execute(sql: "VACUUM") } }
    }

    /// Waits until every committed change is on disk.
    ///
    /// Commits are atomic and survive a crash of any process at once (SQLite WAL), but like an
    /// ordinary file's writes they reach the disk on the system's schedule; `fsync` on a mounted
    /// file, which promises durability, waits here. A checkpoint syncs the log and the database.
    public func synchronize() throws {
        _ = try translatingDatabaseErrors { try database.writeWithoutTransaction { try $0.checkpoint(.passive) } }
    }

    // One-write conveniences: each runs the `StoreWriter` method of the same name (documented
    // there) in a transaction of its own.

    @discardableResult
    public func insert(_ item: Item, path: String? = nil, source: Data? = nil) throws -> ItemRecord {
        try write { try $0.insert(item, path: path, source: source) }
    }
    @discardableResult
    public func update(_ item: Item, basedOn version: Int64? = nil, source: Data? = nil) throws -> ItemRecord {
        try write { try $0.update(item, basedOn: version, source: source) }
    }
    @discardableResult
    public func saveDraft(id: ItemID, bytes: Data, diagnostics: [Diagnostic]) throws -> ItemRecord {
        try write { try $0.saveDraft(id: id, bytes: bytes, diagnostics: diagnostics) }
    }
    @discardableResult
    public func move(id: ItemID, to path: String) throws -> ItemRecord {
        try write { try $0.move(id: id, to: path) }
    }
    public func moveFolder(from: String, to: String) throws {
        try write { try $0.moveFolder(from: from, to: to) }
    }
    public func trash(id: ItemID) throws {
        try write { try $0.trash(id: id) }
    }
    @discardableResult
    public func restore(id: ItemID) throws -> ItemRecord {
        try write { try $0.restore(id: id) }
    }
    @discardableResult
    public func emptyTrash() throws -> Int {
        try write { try $0.emptyTrash() }
    }

    /// The extended attributes the user set on item `id`'s file, by name.
    public func extendedAttributes(id: ItemID) throws -> [String: Data] {
        try read { try $0.extendedAttributes(id: id) }
    }

    // MARK: History

    /// The earlier versions of item `id` the store keeps, newest first (the current one is
    /// not among them).
    public func history(id: ItemID) throws -> [ItemVersion] {
        try readDatabase { try ItemHistory.versions(of: id, in: $0) }
    }

    /// How the current version of item `id` came to be.
    public func origin(of id: ItemID) throws -> ChangeOrigin? {
        try readDatabase { try ItemHistory.currentOrigin(of: id, in: $0) }
    }

    /// The bytes item `id`'s file showed at `version`: an earlier version from the history, or
    /// the current one; nil if that version is no longer kept.
    public func file(id: ItemID, version: Int64) throws -> Data? {
        try read { try $0.file(id: id, version: version) }
    }

    // MARK: Change feed

    /// Changes with a sequence greater than `sequence`, oldest first.
    public func changes(after sequence: Int64, limit: Int = 1000) throws -> [Change] {
        try readDatabase { try ChangeFeed.changes(after: sequence, limit: limit, in: $0) }
    }
    /// The newest sequence number (0 for a new library).
    public func lastSequence() throws -> Int64 {
        try readDatabase { try ChangeFeed.lastSequence(in: $0) }
    }

    // MARK: Search and trash

    /// Live items containing every word of `query` (any text is safe: words are searched for,
    /// never parsed as FTS syntax), best match first.
    public func search(_ query: String, limit: Int = 50) throws -> [SearchHit] {
        guard let query = SearchQuery(query) else { return [] }
        return try search(query, limit: limit)
    }

    /// Live items matching `query`, best match first, at most `limit`.
    public func search(_ query: SearchQuery, limit: Int) throws -> [SearchHit] {
        try readDatabase { try SearchIndex.search(query, limit: limit, in: $0) }
    }
    /// Items in the trash, most recently trashed first.
    public func trashedItems() throws -> [TrashedItem] {
        try read { try $0.trashed() }
    }
}

/// Marks the threads running a write transaction (``LibraryStore/isWritingOnThisThread``).
private enum TransactionMarker {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left for the transaction marker")
        return key
    }()

    static var isInside: Bool { pthread_getspecific(key) != nil }

    static func inside<T>(_ body: () throws -> T) rethrows -> T {
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(key, outer) }
        return try body()
    }
}
