import Foundation
import Glibc

/// Setting what a file carries besides its bytes (`chmod`, `utimensat`), for copies that keep
/// a file's mode and modification time.
public enum FileMetadata {
    /// Gives the file at `path` the mode bits `mode` (symlinks followed).
    public static func setMode(_ mode: UInt32, of path: String) throws(SystemCallError) {
        guard chmod(path, mode_t(mode)) == 0 else { throw SystemCallError("chmod \(name(of: path))") }
    }

    /// Gives the file at `path` `time` as its modification and access time (symlinks followed).
    public static func setModified(_ time: FileStatus.Time, of path: String) throws(SystemCallError) {
        let spec = timespec(tv_sec: time.seconds, tv_nsec: time.nanoseconds)
        guard utimensat(AT_FDCWD, path, [spec, spec], 0) == 0 else { throw SystemCallError("set times of \(name(of: path))") }
    }

    private static func name(of path: String) -> String { (path as NSString).lastPathComponent }
}
