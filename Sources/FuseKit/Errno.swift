import ShelfSystem
#if canImport(Glibc)
import Glibc
#endif

/// A POSIX error number, the only kind of failure the kernel understands.
///
/// Every failed reply goes through ``Errno/init(for:)``, the one place that decides which
/// number a Swift error becomes: an `Errno` is itself, an ``ErrnoConvertible`` error says its
/// own number, and anything else becomes `EIO` (so an unexpected error is never mistaken for
/// a meaningful answer such as "no such file").
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The positive error number (`ENOENT`, …).
    public let code: Int32

    public init(_ code: Int32) {
        precondition(code > 0, "an errno is positive; \(code) is not")
        self.code = code
    }

    /// The number for any error: itself, its ``ErrnoConvertible/errno``, or `EIO`.
    public init(for error: any Error) {
        switch error {
        case let errno as Errno: self = errno
        case let convertible as ErrnoConvertible: self = convertible.errno
        default: self = .ioError
        }
    }

    public var description: String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }

    public static let notPermitted = Errno(EPERM)
    public static let noEntry = Errno(ENOENT)
    public static let ioError = Errno(EIO)
    public static let badHandle = Errno(EBADF)
    public static let accessDenied = Errno(EACCES)
    public static let busy = Errno(EBUSY)
    public static let exists = Errno(EEXIST)
    public static let crossDevice = Errno(EXDEV)
    public static let notDirectory = Errno(ENOTDIR)
    public static let isDirectory = Errno(EISDIR)
    public static let invalid = Errno(EINVAL)
    public static let fileTooLarge = Errno(EFBIG)
    public static let noSpace = Errno(ENOSPC)
    public static let readOnlyFilesystem = Errno(EROFS)
    public static let outOfRange = Errno(ERANGE)
    public static let nameTooLong = Errno(ENAMETOOLONG)
    public static let notImplemented = Errno(ENOSYS)
    public static let notEmpty = Errno(ENOTEMPTY)
    public static let noAttribute = Errno(ENODATA)
    public static let notSupported = Errno(EOPNOTSUPP)
    public static let timedOut = Errno(ETIMEDOUT)
    public static let tryAgain = Errno(EAGAIN)
    public static let interrupted = Errno(EINTR)
}

/// An error that knows which errno the kernel should see for it.
///
/// Adopt this in a filesystem's own error types (for example "item not found" → `ENOENT`) so
/// handlers can simply `throw` them; see ``Errno/init(for:)``.
public protocol ErrnoConvertible: Error {
    var errno: Errno { get }
}

/// A failed system call answers with the number it failed with (`EIO` if it set none).
extension SystemCallError: ErrnoConvertible {
    public var errno: Errno { code > 0 ? Errno(code) : .ioError }
}
