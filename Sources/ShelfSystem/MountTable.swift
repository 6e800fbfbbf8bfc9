import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The mounts of this process's mount namespace, from `/proc/self/mountinfo`.
public enum MountTable {
    /// One line of mountinfo.
    public struct Mount: Sendable, Hashable {
        /// Where it is mounted (escapes such as `\040` decoded).
        public var mountpoint: String
        /// `fuse`, `fuse.<subtype>`, `ext4`, …
        public var filesystemType: String
        /// The source shown by `mount` (a FUSE mount's `fsname`).
        public var source: String
        /// The device minor number; a FUSE mount's connection is `/sys/fs/fuse/connections/<minor>`.
        public var deviceMinor: Int
    }

    public static func mounts() -> [Mount] {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap(parse)
    }

    /// The mount whose mountpoint is exactly `path`, if any (the topmost when stacked).
    ///
    /// Only the *parent* folder's symlinks are resolved: touching the path itself would ask the
    /// filesystem mounted there, which may not be serving yet (or ever) and would block.
    public static func mount(at path: String) -> Mount? {
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let parent = url.deletingLastPathComponent().resolvingSymlinksInPath()
        let resolved = parent.appendingPathComponent(url.lastPathComponent).path
        return mounts().last { $0.mountpoint == resolved || $0.mountpoint == path }
    }

    /// Whether the mount at `path` lost its filesystem process: the kernel answers every
    /// request on it with `ENOTCONN` ("Transport endpoint is not connected") until it is
    /// unmounted. Asked with `statvfs`, which the kernel always sends to the filesystem: a
    /// `stat` of the mount's root can be answered from attributes the kernel still caches.
    public static func isDisconnected(_ path: String) -> Bool {
        var info = statvfs()
        return statvfs(path, &info) != 0 && errno == ENOTCONN
    }

    /// Fields: id parent major:minor root mountpoint options [optional…] - type source superopts.
    private static func parse(_ line: Substring) -> Mount? {
        let fields = line.split(separator: " ")
        guard fields.count >= 10, let separator = fields.firstIndex(of: "-"), separator + 2 < fields.count,
              let minor = fields[2].split(separator: ":").last.flatMap({ Int($0) }) else { return nil }
        return Mount(mountpoint: unescape(fields[4]), filesystemType: String(fields[separator + 1]),
                     source: unescape(fields[separator + 2]), deviceMinor: minor)
    }

    /// Decodes the kernel's octal escapes (`\040` for space, `\011`, `\012`, `\134`).
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
