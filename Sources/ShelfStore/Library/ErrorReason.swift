import Foundation
import ShelfSystem

/// One short line for why a file operation failed, for messages shown to people.
///
/// Foundation's errors print as `Error Domain=NSCocoaErrorDomain Code=4 "(null)" UserInfo=…`,
/// which names neither the cause nor a fix; this turns them (and POSIX errors) into the
/// system's own words (`No such file or directory`). Shelf's own errors keep their text.
public enum ErrorReason {
    public static func of(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return strerror(posix.code.rawValue) }
        let nsError = error as NSError
        guard nsError.domain == NSCocoaErrorDomain || nsError.domain == NSPOSIXErrorDomain else {
            return String(describing: error)
        }
        if nsError.domain == NSPOSIXErrorDomain { return strerror(Int32(nsError.code)) }
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return strerror(Int32(underlying.code))
        }
        switch CocoaError.Code(rawValue: nsError.code) {
        case .fileNoSuchFile, .fileReadNoSuchFile: return strerror(ENOENT)
        case .fileReadNoPermission, .fileWriteNoPermission: return strerror(EACCES)
        case .fileWriteOutOfSpace: return strerror(ENOSPC)
        case .fileWriteVolumeReadOnly: return strerror(EROFS)
        case .fileWriteFileExists: return strerror(EEXIST)
        case .fileReadCorruptFile, .fileReadUnknownStringEncoding, .fileReadInapplicableStringEncoding:
            return "the file is not text in the expected encoding"
        default:
            let text = nsError.localizedDescription
            return text.contains("Error Domain=") ? "error \(nsError.code) from the file system" : text
        }
    }

    private static func strerror(_ code: Int32) -> String {
        SystemCallError.reason(of: code)
    }
}
