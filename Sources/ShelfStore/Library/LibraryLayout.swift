import Foundation

/// Where each part of a library lives inside its folder: the one place these names are spelled.
///
/// ```
/// shelf.sqlite (-wal, -shm)  records, versions, trash, change feed, search, sync ledger
/// files/                     the plain-file area (Books/ and Notes/ folders, attachments, .git)
/// journal/                   mounts' unsaved writes, replayed by the next mount;
///   set-aside/               entries that could not be, kept for `shelf status`
/// run/                       each running mount's control socket
/// logs/mount.log             the mount's log
/// sync.lock                  one sync round at a time across processes
/// ```
public struct LibraryLayout: Sendable {
    public let folder: URL

    public init(folder: URL) {
        self.folder = folder
    }

    /// The database's file name; SQLite's log files beside it start with it.
    public static let databaseName = "shelf.sqlite"

    public var database: URL { folder.appendingPathComponent(Self.databaseName) }
    public var plainFiles: URL { folder.appendingPathComponent("files", isDirectory: true) }
    public var journal: URL { folder.appendingPathComponent("journal", isDirectory: true) }
    public var controlSockets: URL { folder.appendingPathComponent("run", isDirectory: true) }
    public var logs: URL { folder.appendingPathComponent("logs", isDirectory: true) }
    public var mountLog: URL { logs.appendingPathComponent("mount.log") }
    public var syncLock: URL { folder.appendingPathComponent("sync.lock") }
    /// The data key of the encrypted cloud the library is linked to, readable by its owner only.
    public var cloudKey: URL { folder.appendingPathComponent("cloud-key.json") }
}

extension LibraryStore {
    public var layout: LibraryLayout { LibraryLayout(folder: folder) }
}
