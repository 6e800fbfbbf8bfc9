import Foundation
import GRDB

extension StoreError {
    /// The `StoreError` a user should see for a database failure that is about the library
    /// (locked by another program, disk full, read-only, damaged), or nil for errors that
    /// reveal a bug in Shelf and should surface unchanged.
    init?(_ error: DatabaseError, library: URL) {
        switch error.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            self = .libraryBusy(path: library.path)
        case .SQLITE_FULL:
            self = .libraryUnreadable(path: library.path, reason: "the disk is full")
        case .SQLITE_IOERR, .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_CORRUPT,
             .SQLITE_NOTADB, .SQLITE_AUTH:
            self = .libraryUnreadable(path: library.path, reason: "shelf.sqlite: \(error.message ?? error.description)")
        default:
            return nil
        }
    }
}
