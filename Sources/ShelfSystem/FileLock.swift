import Glibc

/// An exclusive `flock` on a lock file, held while a body runs: it serialises processes, and
/// the kernel drops it when the holder dies, so a crash never leaves it taken.
public enum FileLock {
    /// Runs `body` holding the lock on `path` (made if missing, mode 0600), waiting for it.
    public static func withExclusiveLock<T>(on path: String, _ body: () throws -> T) throws -> T {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SystemCallError("open \(path)") }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw SystemCallError("lock \(path)") }
        }
        return try body()
    }
}
