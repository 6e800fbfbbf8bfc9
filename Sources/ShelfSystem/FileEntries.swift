import Foundation
import Glibc

/// Adding, renaming and removing one name in a folder (`symlink`, `rename`, `unlink`, `rmdir`):
/// the calls that Foundation's `FileManager` either lacks or does differently (its removal
/// recurses into folders, where `rmdir` leaves a folder with files in it).
public enum FileEntries {
    /// Removes the file or symlink at `path` (never a folder).
    public static func removeFile(_ path: String) throws(SystemCallError) {
        guard unlink(path) == 0 else { throw SystemCallError("remove \(name(of: path))") }
    }

    /// Removes the folder at `path` if it is empty.
    public static func removeEmptyFolder(_ path: String) throws(SystemCallError) {
        guard rmdir(path) == 0 else { throw SystemCallError("remove folder \(name(of: path))") }
    }

    /// Renames `from` to `to`, replacing what is there.
    public static func rename(_ from: String, to: String) throws(SystemCallError) {
        guard Glibc.rename(from, to) == 0 else { throw SystemCallError("rename \(name(of: from)) to \(name(of: to))") }
    }

    /// Makes `path` a new symlink to `target`.
    public static func makeSymlink(at path: String, to target: String) throws(SystemCallError) {
        guard symlink(target, path) == 0 else { throw SystemCallError("symlink \(name(of: path))") }
    }

    private static func name(of path: String) -> String { (path as NSString).lastPathComponent }
}
