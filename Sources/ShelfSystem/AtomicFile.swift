import Foundation
import Glibc
import Synchronization

/// Whole-file writes that a crash never leaves half done: the bytes go to a hidden temporary
/// file beside the target, then a rename puts them in place. The one way Shelf writes a file
/// whole, for the mount's plain-file area and for exports alike.
///
/// Temporary names are short whatever the target's (`.shelf-tmp-<pid>-<n>`), so they always
/// fit NAME_MAX, and unique in the process without reading `/dev/urandom` for each.
public enum AtomicFile {
    /// The prefix of every temporary name: whoever owns a folder may hide and remove them.
    public static let temporaryPrefix = ".shelf-tmp-"

    /// A fresh temporary name.
    public static func temporaryName() -> String {
        temporaryPrefix + "\(getpid())-\(counter.add(1, ordering: .relaxed).newValue)"
    }

    private static let counter = Atomic<UInt64>(0)

    /// Writes `bytes` as the whole file at `path`, replacing it atomically (fsynced first);
    /// `permissions`: the new file's mode bits (before the umask).
    public static func write(_ bytes: some Collection<UInt8>, to path: String,
                             permissions: mode_t = 0o644) throws(SystemCallError) {
        try publish(try stage(bytes, besides: path, durably: true, permissions: permissions), as: path)
    }

    /// Writes `bytes` to a new temporary file in `path`'s folder and returns its path;
    /// `durably` fsyncs it (otherwise the caller syncs the file system before publishing).
    public static func stage(_ bytes: some Collection<UInt8>, besides path: String,
                             durably: Bool, permissions: mode_t = 0o644) throws(SystemCallError) -> String {
        let temporary = (path as NSString).deletingLastPathComponent + "/" + temporaryName()
        let file = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, permissions)
        guard file >= 0 else { throw SystemCallError("create a temporary file for \(Self.name(of: path))") }
        let contiguous = Array(bytes)
        var written = 0
        var failure: SystemCallError?
        while written < contiguous.count && failure == nil {
            let count = contiguous.withUnsafeBytes { Glibc.write(file, $0.baseAddress! + written, $0.count - written) }
            if count >= 0 {
                written += count
            } else if errno != EINTR {
                failure = SystemCallError("write \(Self.name(of: path))")
            }
        }
        if failure == nil && durably && fsync(file) != 0 { failure = SystemCallError("sync \(Self.name(of: path))") }
        close(file)
        if let failure {
            unlink(temporary)
            throw failure
        }
        return temporary
    }

    /// Writes `bytes` durably as a new file at `path` that is never replaced: false (and
    /// nothing written) if `path` exists already. Hard-linking the staged file into place
    /// refuses an existing name atomically, where a rename would replace it.
    @discardableResult
    public static func writeOnce(_ bytes: some Collection<UInt8>, to path: String) throws(SystemCallError) -> Bool {
        let temporary = try stage(bytes, besides: path, durably: true)
        defer { unlink(temporary) }
        if link(temporary, path) == 0 { return true }
        switch errno {
        case EEXIST:
            return false
        case EPERM, EOPNOTSUPP:
            // A file system without hard links (FAT, some network shares): check, then rename.
            if access(path, F_OK) == 0 { return false }
            try publish(temporary, as: path)
            return true
        default:
            throw SystemCallError("create \(Self.name(of: path))")
        }
    }

    /// Renames a staged temporary file over `path` (removing the temporary file if that fails).
    public static func publish(_ temporary: String, as path: String) throws(SystemCallError) {
        guard rename(temporary, path) == 0 else {
            let failure = SystemCallError("rename onto \(Self.name(of: path))")
            unlink(temporary)
            throw failure
        }
    }

    /// Makes every staged file durable in one call, for a caller that staged many without
    /// `durably`. `sync()` rather than `syncfs()` (which Glibc's Swift module does not expose):
    /// on Linux it returns once the data is written.
    public static func syncStagedFiles() {
        sync()
    }

    /// Makes the renames in the folder at `path` durable.
    public static func syncFolder(_ path: String) throws(SystemCallError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemCallError("open folder \(name(of: path))") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw SystemCallError("sync folder \(name(of: path))") }
    }

    private static func name(of path: String) -> String { (path as NSString).lastPathComponent }
}
