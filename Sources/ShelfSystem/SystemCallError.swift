import Glibc

/// A failed system call: what it was for, and errno.
public struct SystemCallError: Error, Sendable, CustomStringConvertible {
    public let operation: String
    public let code: Int32

    /// Captures the current errno.
    public init(_ operation: String) {
        self.init(operation, code: errno)
    }

    /// For a call that returns its error number rather than setting errno (`posix_spawn`).
    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    public var description: String { "cannot \(operation): \(Self.reason(of: code))" }

    /// The system's words for errno `code` (`No such file or directory`).
    public static func reason(of code: Int32) -> String { String(cString: strerror(code)) }
}
