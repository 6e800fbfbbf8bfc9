import Foundation
import GRDB

/// A private copy of a reading app's SQLite database, made before anything is read.
///
/// The app's file is opened read-only and copied with SQLite's online backup API, which reads
/// it consistently with its write-ahead log and never writes it or holds it locked for longer
/// than the copy (a mounted Kobo's database is the device's; Calibre may be running). The
/// `immutable=1` shortcut would skip the log and could read a live database torn.
enum SQLiteSnapshot {
    /// An in-memory copy of the database at `file`; a file SQLite cannot read is not a
    /// `format` source.
    static func copy(of file: URL, format: ImportFormat) throws -> DatabaseQueue {
        guard FileManager.default.fileExists(atPath: file.path) else { throw ImportError.fileMissing(path: file.path) }
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let source = try DatabaseQueue(path: file.path, configuration: configuration)
            let copy = try DatabaseQueue()
            try source.backup(to: copy)
            try source.close()
            return copy
        } catch let error as DatabaseError {
            let reason = error.resultCode == .SQLITE_NOTADB ? "it is not an SQLite database"
                : "SQLite cannot read it (\(error.message ?? "\(error.resultCode)"))"
            throw ImportError.notFormat(path: file.path, format: format, reason: reason)
        }
    }

    /// The column names of `table` (empty when there is no such table).
    static func columns(of table: String, in db: Database) throws -> Set<String> {
        Set(try Row.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table]).map { $0["name"] as String })
    }
}

extension Row {
    /// The column as text, whatever SQLite holds in it (an app's columns are loosely typed;
    /// GRDB's typed subscripts stop the program on a mismatch). Nil for a column not selected.
    func text(_ column: String) -> String? { Self.text(value(column)) }
    func text(at index: Int) -> String? { Self.text(self[index] as DatabaseValue) }

    /// The column as a whole number: an integer, a whole real, or text that spells one.
    func integer(_ column: String) -> Int? {
        switch value(column).storage {
        case .int64(let value): Int(exactly: value)
        case .double(let value): Int(exactly: value)
        case .string(let value): Int(value.trimmingCharacters(in: .whitespaces))
        case .null, .blob: nil
        }
    }

    /// The column as a real number.
    func real(_ column: String) -> Double? {
        switch value(column).storage {
        case .int64(let value): Double(value)
        case .double(let value): value
        case .string(let value): Double(value.trimmingCharacters(in: .whitespaces))
        case .null, .blob: nil
        }
    }

    /// The column's value; NULL for a column the query did not select (one this app version lacks).
    private func value(_ column: String) -> DatabaseValue {
        hasColumn(column) ? self[column] : .null
    }

    private static func text(_ value: DatabaseValue) -> String? {
        switch value.storage {
        case .string(let text): text
        case .int64(let number): String(number)
        case .double(let number): String(number)
        case .blob(let data): String(data: data, encoding: .utf8)
        case .null: nil
        }
    }
}
