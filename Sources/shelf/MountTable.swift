import Foundation

/// Reads `/proc/self/mountinfo` to find Shelf mounts.
///
/// Shelf mounts carry the file-system type `fuse.shelf` and the source `shelf:<library folder>`,
/// so the table alone tells which library is mounted where.
enum MountTable {
    struct Entry {
        var mountpoint: String
        var fileSystemType: String
        var source: String
    }

    static func entries() -> [Entry] {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            // id parent major:minor root mountpoint options [optional…] - type source super-options
            let fields = line.split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count > 4, let dash = fields.firstIndex(of: "-"), dash + 2 < fields.count else { return nil }
            return Entry(mountpoint: unescape(fields[4]), fileSystemType: String(fields[dash + 1]),
                         source: unescape(fields[dash + 2]))
        }
    }

    static func isShelfMount(_ path: String) -> Bool {
        entries().contains { $0.mountpoint == path && $0.fileSystemType == "fuse.shelf" }
    }

    static func isMounted(_ path: String) -> Bool {
        entries().contains { $0.mountpoint == path }
    }

    static func mountpoints(ofLibrary folder: URL) -> [String] {
        entries().filter { $0.fileSystemType == "fuse.shelf" && $0.source == "shelf:" + folder.path }
            .map(\.mountpoint)
    }

    static func waitUntilUnmounted(_ path: String, timeout: Duration) throws {
        let deadline = ContinuousClock.now + timeout
        while isMounted(path) {
            guard ContinuousClock.now < deadline else {
                throw CLIError("\(path) is still mounted after \(timeout); run `fusermount3 -u -z \(path)` to detach it.")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// mountinfo escapes space, tab, newline and backslash as three octal digits (`\040`).
    private static func unescape(_ field: Substring) -> String {
        var bytes: [UInt8] = []
        var index = field.utf8.startIndex
        let utf8 = field.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "\\"), let end = utf8.index(index, offsetBy: 4, limitedBy: utf8.endIndex),
               let value = UInt8(String(field[utf8.index(after: index)..<end]), radix: 8) {
                bytes.append(value)
                index = end
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
