import Foundation
import Glibc

/// The locks programs hold on files of one mount — `flock`, `fcntl` record locks, open file
/// description locks — as the kernel lists them in `/proc/locks`. The kernel keeps these
/// locks, not the mount (FUSE passes them on only when asked to), so this is the one place a
/// mount can learn that an editor or a script holds one of its files.
public enum KernelFileLocks {
    /// Where the kernel lists them.
    public static let table = "/proc/locks"

    /// The inode numbers on `device` that some process holds a lock on (or waits for). Throws
    /// ``Unreadable`` when `table` cannot be read: then no file may be taken as unlocked.
    public static func lockedInodes(onDevice device: dev_t, table path: String = table) throws -> Set<UInt64> {
        let table: String
        do {
            table = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw Unreadable(path: path, cause: "\(error.localizedDescription)")
        }
        let prefix = String(format: "%02x:%02x:", major(device), minor(device))
        var inodes = Set<UInt64>()
        for line in table.split(separator: "\n") {
            // `1: FLOCK  ADVISORY  WRITE 4242 00:35:17 0 EOF`; a waiter's line has `->` before FLOCK.
            guard let file = line.split(separator: " ").first(where: { $0.hasPrefix(prefix) && $0.count > prefix.count }),
                  let inode = UInt64(file.dropFirst(prefix.count)) else { continue }
            inodes.insert(inode)
        }
        return inodes
    }

    /// Whether some process holds a lock on the file at `path` (or waits for one); true when
    /// the kernel's table cannot be read, since a lock may then be there.
    public static func isLocked(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (try? lockedInodes(onDevice: info.st_dev).contains(UInt64(info.st_ino))) ?? true
    }

    /// The kernel's lock table could not be read, so which files are locked is unknown.
    public struct Unreadable: Error, CustomStringConvertible {
        public let path: String
        public let cause: String
        public var description: String {
            "the kernel's lock table \(path) cannot be read (\(cause)), so any file may be locked; mount /proc to let changes through"
        }
    }

    /// The device a mounted folder's files are on.
    public static func device(of mountpoint: String) -> dev_t? {
        var info = stat()
        return stat(mountpoint, &info) == 0 ? info.st_dev : nil
    }

    /// glibc's `major`/`minor` (macros Swift does not import).
    private static func major(_ device: dev_t) -> UInt32 {
        UInt32(((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff))
    }

    private static func minor(_ device: dev_t) -> UInt32 {
        UInt32((device & 0xff) | ((device >> 12) & ~0xff))
    }
}
