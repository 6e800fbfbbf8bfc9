import Foundation
import GRDB
import ShelfModel
import ShelfSystem

/// Making and opening a library's folder (its layout: ``LibraryLayout``), and the checks that turn a wrong folder into an error naming the folder and the fix.
///
/// Private by default: a reading library is personal, so what Shelf creates is its owner's
/// only (folders 0700, the database 0600; SQLite gives its log files the database's mode).
struct LibraryFolder {
    let url: URL
    /// How long a write waits for other processes' transactions before `libraryBusy`. Imports
    /// commit 10,000 rows at once, so the default is generous.
    var busyTimeout: TimeInterval = 30

    var layout: LibraryLayout { LibraryLayout(folder: url) }

    /// Throws `libraryMissing`, `libraryUnreadable` or `notALibrary` unless `url` is a folder
    /// this process may use that holds a database.
    func checkExistingLibrary() throws {
        try checkUsableFolder()
        guard FileManager.default.fileExists(atPath: layout.database.path) else {
            throw StoreError.notALibrary(path: url.path)
        }
    }

    /// Creates the library folder and its parents if missing.
    func createFolder() throws {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError.libraryUnreadable(path: url.path, reason: "the folder cannot be created (\(ErrorReason.of(error)))")
        }
        try checkUsableFolder()
    }

    /// Creates `files/Books` and `files/Notes` if missing: the mount's plain-file area, where
    /// the user's folders inside Books/ and Notes/ live.
    func createPlainFileFolders() throws {
        for kind in ItemKind.allCases {
            let folder = layout.plainFiles.appendingPathComponent(kind.folderName, isDirectory: true)
            do {
                // Made first so it gets its mode; another process may be making it at once.
                try FileManager.default.createDirectory(at: layout.plainFiles, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw StoreError.libraryUnreadable(path: url.path, reason: "\(folder.path) cannot be created (\(ErrorReason.of(error)))")
            }
        }
    }

    /// Opens the database in WAL mode with a busy timeout, so the mount, the CLI and imports
    /// (separate processes) share it, and brings its schema up to date.
    func openDatabase() throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        return try whileOpeningExclusively {
            do {
                // Created owner-only before SQLite creates it with the umask's mode.
                let created = open(layout.database.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                if created >= 0 { close(created) }
                let pool = try DatabasePool(path: layout.database.path, configuration: configuration)
                try Schema.migrator.migrate(pool)
                return pool
            } catch let error as DatabaseError {
                throw StoreError(error, library: url) ?? StoreError.libraryUnreadable(
                    path: url.path, reason: "\(layout.database.lastPathComponent): \(error.message ?? error.description)")
            }
        }
    }

    /// Runs `body` holding an exclusive `flock` on the library folder. Two processes opening a
    /// new library at once would otherwise race: switching to WAL fails while another
    /// connection is opening, and GRDB's migrator reads which migrations are applied before it
    /// takes the write lock, so both would create the tables. (A lock on the folder, not on
    /// `shelf.sqlite`: closing any descriptor of the database file would drop SQLite's locks.)
    private func whileOpeningExclusively<T>(_ body: () throws -> T) throws -> T {
        let descriptor = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw StoreError.libraryUnreadable(path: url.path, reason: "the folder cannot be opened (\(String(cString: strerror(errno))))")
        }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else {
            throw StoreError.libraryUnreadable(path: url.path, reason: "the folder cannot be locked (\(String(cString: strerror(errno))))")
        }
        return try body()
    }

    private func checkUsableFolder() throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw StoreError.libraryMissing(path: url.path)
        }
        guard isFolder.boolValue else {
            throw StoreError.libraryUnreadable(path: url.path, reason: "it is a file, not a folder")
        }
        // Listing needs r and x, SQLite's WAL and lock files need w. AT_EACCESS: check with
        // the ids file access really uses (effective/filesystem), as SQLite will meet them.
        guard faccessat(AT_FDCWD, url.path, R_OK | W_OK | X_OK, AT_EACCESS) == 0 else {
            throw StoreError.libraryUnreadable(path: url.path, reason: "no read and write permission on the folder (\(String(cString: strerror(errno))))")
        }
    }
}

extension FolderChangeSignal {
    /// Wakes on commits to the library in `folder`: every commit of any process writes the
    /// database's write-ahead log.
    public static func library(_ folder: URL) -> FolderChangeSignal {
        let signal = FolderChangeSignal()
        signal.watch(Watch(folder: folder) { $0.hasPrefix(LibraryLayout.databaseName) })
        return signal
    }
}
