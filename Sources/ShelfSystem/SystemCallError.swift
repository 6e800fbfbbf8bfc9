import Glibc

/// A failed system call: what it was for, and errno.
public struct SystemCallError: Error, Sendable, CustomStringConvertible {
    public let operation: String
    public let code: Int32

    /// Captures the current errno.
    public init(_ operation: String) {
        self.operation = operation
        self.code = errno
    }

    public var description: String { "cannot \(operation): \(String(cString: strerror(code)))" }
}
