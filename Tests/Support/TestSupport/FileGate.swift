import Foundation
import Glibc

/// A file (of a folder cloud, say) replaced by a named pipe: a process that opens it to read
/// blocks there until the test lets it through, so a test knows the process is inside that read
/// — a download, a pull — when it acts (a `kill -9` that must land mid-way), instead of sleeping
/// and hoping. ``restore()`` puts the file back byte for byte.
public final class FileGate: @unchecked Sendable {
    public let path: String
    private let bytes: Data
    private var writer: Int32 = -1

    public init(replacing path: String) throws {
        self.path = path
        bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        guard unlink(path) == 0, mkfifo(path, 0o644) == 0 else { throw GateError(path: path, errno: errno) }
    }

    /// Waits until a process has the pipe open to read: opening its writing end without
    /// blocking succeeds only then (ENXIO before). The reader then waits in `read` for bytes
    /// that never come until ``restore()``; false if no reader came within `timeout`.
    public func waitUntilAReaderWaits(within timeout: Duration = .seconds(30)) -> Bool {
        eventually(within: timeout) {
            if writer < 0 { writer = open(path, O_WRONLY | O_NONBLOCK) }
            return writer >= 0
        }
    }

    /// Closes the pipe (a reader still there reads an empty file) and puts the file back.
    public func restore() throws {
        if writer >= 0 { close(writer) }
        writer = -1
        unlink(path)
        try bytes.write(to: URL(fileURLWithPath: path))
    }

    deinit { if writer >= 0 { close(writer) } }

    struct GateError: Error, CustomStringConvertible {
        let path: String
        let errno: Int32
        var description: String { "cannot put a named pipe at \(path): \(String(cString: strerror(errno)))" }
    }
}
