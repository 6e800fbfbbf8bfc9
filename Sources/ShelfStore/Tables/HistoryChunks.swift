import Crypto
import Foundation
import GRDB

/// The bytes of kept versions, shared between versions in chunks (`history_chunk`): a version
/// is the list of its chunks' hashes, so 32 versions of a large file that differ by an edit
/// cost the file about once, not 32 times.
///
/// Chunk boundaries depend on the bytes around them (a gear rolling hash, as in FastCDC), not on
/// offsets: an insertion early in a file moves only the chunks it touches. Each chunk counts the
/// versions that use it and goes with the last of them.
enum HistoryChunks {
    /// No chunk is cut shorter (but the file's last), nor longer.
    static let smallest = 2 << 10
    static let largest = 64 << 10
    /// A boundary falls where the rolling hash's top bits under this mask are zero: about every
    /// 8 KiB past `smallest`.
    private static let boundaryMask: UInt64 = 0x1FFF << 51

    /// Stores `content`'s chunks (counting one more use of each) and returns their hashes, in order.
    static func store(_ content: Data, in db: Database) throws -> Data {
        var hashes = Data()
        for range in boundaries(of: content) {
            let chunk = content[range]
            let hash = Data(SHA256.hash(data: chunk))
            try db.cachedStatement(sql: """
                INSERT INTO history_chunk (hash, content, refs) VALUES (?, ?, 1)
                ON CONFLICT (hash) DO UPDATE SET refs = refs + 1
                """).execute(arguments: [hash, chunk])
            hashes.append(hash)
        }
        return hashes
    }

    /// The bytes the chunks `hashes` make.
    static func content(of hashes: Data, in db: Database) throws -> Data {
        var content = Data()
        for hash in split(hashes) {
            guard let chunk = try Data.fetchOne(db.cachedStatement(sql: "SELECT content FROM history_chunk WHERE hash = ?"),
                                                arguments: [hash]) else {
                throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "a kept version's chunk is missing")
            }
            content.append(chunk)
        }
        return content
    }

    /// One use fewer of each chunk of `hashes`; chunks no version uses any more are deleted.
    static func release(_ hashes: Data, in db: Database) throws {
        for hash in split(hashes) {
            try db.cachedStatement(sql: "UPDATE history_chunk SET refs = refs - 1 WHERE hash = ?").execute(arguments: [hash])
            try db.cachedStatement(sql: "DELETE FROM history_chunk WHERE hash = ? AND refs <= 0").execute(arguments: [hash])
        }
    }

    private static func split(_ hashes: Data) -> [Data] {
        stride(from: hashes.startIndex, to: hashes.endIndex, by: 32).map { hashes[$0..<min($0 + 32, hashes.endIndex)] }
    }

    /// The chunks `content` is cut into, in order, covering it.
    static func boundaries(of content: Data) -> [Range<Int>] {
        content.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> [Range<Int>] in
            let base = content.startIndex
            var ranges: [Range<Int>] = []
            var start = 0
            while start < bytes.count {
                let end = cut(bytes, from: start)
                ranges.append(base + start..<base + end)
                start = end
            }
            return ranges
        }
    }

    /// Where the chunk starting at `start` ends.
    private static func cut(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        let limit = min(bytes.count, start + largest)
        guard limit - start > smallest else { return limit }
        var hash: UInt64 = 0
        var index = start + smallest
        while index < limit {
            hash = (hash << 1) &+ gear[Int(bytes[index])]
            index += 1
            if hash & boundaryMask == 0 { return index }
        }
        return limit
    }

    /// A fixed random value per byte (splitmix64 from a constant seed: the same on every device).
    private static let gear: [UInt64] = {
        var state: UInt64 = 0x5348_454C_4621_0010
        return (0..<256).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixed ^ (mixed >> 31)
        }
    }()
}
