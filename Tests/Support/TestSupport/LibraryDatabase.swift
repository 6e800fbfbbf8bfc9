import Foundation
import GRDB

/// Writes into a library's database behind the store's back, as an older Shelf could have
/// left it (an item at a path the store now refuses): for tests of what repairs such libraries.
public enum LibraryDatabase {
    /// Runs `sql` with `arguments` on the database of the library in `folder` (numbers as text:
    /// columns of numbers convert them).
    public static func execute(_ sql: String, _ arguments: [String], inLibrary folder: URL) throws {
        let queue = try DatabaseQueue(path: folder.appendingPathComponent("shelf.sqlite").path)
        try queue.write { try $0.execute(sql: sql, arguments: StatementArguments(arguments)) }
    }
}
