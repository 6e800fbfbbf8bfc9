import Foundation
import ShelfModel
import ShelfMarkdown

/// How records and draft diagnostics are kept in their BLOB columns (JSON, as `Codable` gives).
///
/// One instance per transaction or read, so its coders are reused across rows.
struct RecordCoding {
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    func encode(_ item: Item) throws -> Data { try encoder.encode(item) }
    func encode(_ diagnostics: [Diagnostic]) throws -> Data { try encoder.encode(diagnostics) }

    /// Decodes the record of item `id`; a row that does not decode is `damagedRecord`.
    func decodeItem(_ data: Data, id: ItemID) throws -> Item {
        try decode(Item.self, from: data, id: id)
    }

    func decodeDiagnostics(_ data: Data, id: ItemID) throws -> [Diagnostic] {
        try decode([Diagnostic].self, from: data, id: id)
    }

    /// Whether an encoded record may hold passage fields that files do not show: only then
    /// does it name them, since a passage encodes its color and sources only when it has them.
    /// (A passage's text quoting the key makes this say yes; decoding then tells.)
    static func mayHoldUnrenderedFields(_ encoded: Data) -> Bool {
        unrenderedKeys.contains { encoded.range(of: $0) != nil }
    }

    private static let unrenderedKeys = [Data(#""color":"#.utf8), Data(#""sources":"#.utf8)]

    private func decode<T: Decodable>(_ type: T.Type, from data: Data, id: ItemID) throws -> T {
        do {
            return try decoder.decode(type, from: data)
        } catch {
            throw StoreError.damagedRecord(id: id, reason: String(describing: error))
        }
    }
}

/// Stored timestamps: REAL seconds since Foundation's reference date (2001-01-01 UTC), the
/// value a `Date` holds, so a date reads back exactly as written (seconds since 1970 would
/// round, and a record read back would differ from the one written).
extension Date {
    init(storedSeconds: Double) { self.init(timeIntervalSinceReferenceDate: storedSeconds) }
    var storedSeconds: Double { timeIntervalSinceReferenceDate }
}
