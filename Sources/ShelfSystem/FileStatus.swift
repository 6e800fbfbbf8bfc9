import Foundation
import Glibc

/// What the kernel says of one file (`lstat`, `stat`, `fstat`), in the few fields callers above
/// this layer read: its kind, mode bits, size and modification time.
public struct FileStatus: Sendable {
    public enum Kind: Sendable { case folder, file, symlink, other }

    /// A modification time to the nanosecond, as the kernel keeps it (a `Date` would round it).
    public struct Time: Equatable, Sendable {
        public var seconds: Int
        public var nanoseconds: Int

        public var date: Date { Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9) }
    }

    public let kind: Kind
    /// The permission bits with setuid, setgid and sticky (`st_mode & 0o7777`).
    public let mode: UInt32
    public let size: Int
    public let modified: Time

    /// The file at `path`, or nil when nothing is there; a symlink itself unless
    /// `followingSymlink`.
    public init?(of path: String, followingSymlink: Bool = false) {
        var info = stat()
        guard (followingSymlink ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        self.init(info)
    }

    /// The file open as `descriptor`, or nil when the call fails.
    public init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    private init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFDIR: kind = .folder
        case S_IFREG: kind = .file
        case S_IFLNK: kind = .symlink
        default: kind = .other
        }
        mode = UInt32(info.st_mode & 0o7777)
        size = Int(info.st_size)
        modified = Time(seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec))
    }
}

extension FileStatus.Time {
    /// `date` cut to whole seconds and the nanoseconds past them.
    public init(_ date: Date) {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        self.init(seconds: Int(seconds), nanoseconds: Int((date.timeIntervalSince1970 - seconds) * 1e9))
    }
}
