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

    private func decode<T: Decodable>(_ type: T.Type, from data: Data, id: ItemID) throws -> T {
        do {
            return try decoder.decode(type, from: data)
        } catch {
            throw StoreError.damagedRecord(id: id, reason: String(describing: error))
        }
    }
}

/// Stored timestamps: seconds since 1970 as REAL, so they sort and compare in SQL.
extension Date {
    init(storedSeconds: Double) { self.init(timeIntervalSince1970: storedSeconds) }
    var storedSeconds: Double { timeIntervalSince1970 }
}
