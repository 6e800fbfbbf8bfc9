internal import CFuse
#if canImport(Glibc)
import Glibc
#endif

/// A batch of directory entries for `readdir`, never larger than the kernel's buffer.
///
/// Add entries in a stable order starting after the `offset` the kernel passed, giving each
/// the offset at which the *next* call should continue; stop at the first ``add`` that
/// returns false (that entry did not fit and must come first in the next batch).
public struct DirectoryListing: Sendable {
    private(set) var buffer: DirentBuffer

    /// `capacity` is the size the kernel asked for (the handler's `size` argument).
    public init(capacity: Int) {
        buffer = DirentBuffer(capacity: capacity)
    }

    /// The fewest bytes an entry takes (its header and a name of up to 8 bytes): a batch of
    /// `capacity` bytes never holds more than `capacity / smallestEntrySize` entries.
    public static let smallestEntrySize = 32

    /// Adds one name. Returns false, adding nothing, when the batch is full.
    public mutating func add(name: String, inode: Inode, kind: FileKind, nextOffset: Int64) -> Bool {
        var attributes = stat()
        attributes.st_ino = UInt(inode.rawValue)
        attributes.st_mode = kind.modeBits
        return buffer.append { destination, room in
            fuse_add_direntry(nil, destination, room, name, &attributes, off_t(nextOffset))
        }
    }

    public var isEmpty: Bool { buffer.used == 0 }
}

/// A batch of directory entries for `readdirplus`: names with full entries, or names alone.
///
/// Each full entry added (other than `.` and `..`) gives the kernel one lookup count on its inode,
/// exactly like a `lookup` reply; count it the same way. Offsets work as in
/// ``DirectoryListing``.
public struct DirectoryPlusListing: Sendable {
    private(set) var buffer: DirentBuffer

    public init(capacity: Int) {
        buffer = DirentBuffer(capacity: capacity)
    }

    /// The fewest bytes an entry takes (the kernel's entry, its header and a short name).
    public static let smallestEntrySize = 160

    /// Adds one name with its entry. Returns false, adding nothing, when the batch is full.
    public mutating func add(name: String, entry: Entry, nextOffset: Int64) -> Bool {
        append(name: name, parameters: fuse_entry_param(entry), nextOffset: nextOffset)
    }

    /// Adds one name without an entry (node id 0), which the kernel lists as a plain `readdir`
    /// would: no lookup count, and its cached entry and attributes of the name, if any, stay as
    /// they are. Returns false, adding nothing, when the batch is full.
    public mutating func addNameOnly(name: String, inode: Inode, kind: FileKind, nextOffset: Int64) -> Bool {
        var parameters = fuse_entry_param()
        parameters.attr.st_ino = UInt(inode.rawValue)
        parameters.attr.st_mode = kind.modeBits
        return append(name: name, parameters: parameters, nextOffset: nextOffset)
    }

    private mutating func append(name: String, parameters: fuse_entry_param, nextOffset: Int64) -> Bool {
        var parameters = parameters
        return buffer.append { destination, room in
            fuse_add_direntry_plus(nil, destination, room, name, &parameters, off_t(nextOffset))
        }
    }

    public var isEmpty: Bool { buffer.used == 0 }
}

/// The byte buffer both listings fill through libfuse's `fuse_add_direntry*`, which report
/// the size an entry needs and write it only if it fits.
struct DirentBuffer: Sendable {
    private(set) var bytes: [UInt8]
    private(set) var used = 0

    init(capacity: Int) {
        bytes = [UInt8](repeating: 0, count: max(0, capacity))
    }

    /// Calls `write(destination, room)`, which returns the entry's full size; keeps it if it fit.
    mutating func append(_ write: (UnsafeMutablePointer<CChar>, Int) -> Int) -> Bool {
        let used = self.used
        guard used < bytes.count else { return false }
        let needed = bytes.withUnsafeMutableBytes { raw -> Int in
            let destination = raw.baseAddress!.advanced(by: used).assumingMemoryBound(to: CChar.self)
            return write(destination, raw.count - used)
        }
        guard needed <= bytes.count - used else { return false }
        self.used += needed
        return true
    }

    /// The filled part, as handed to `fuse_reply_buf`.
    var filled: ArraySlice<UInt8> { bytes[..<used] }
}
