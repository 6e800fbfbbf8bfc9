import Foundation
import ShelfSystem

/// One short line for why a file operation failed, for messages shown to people.
///
/// Foundation's errors print as `Error Domain=NSCocoaErrorDomain Code=4 "(null)" UserInfo=…`,
/// which names neither the cause nor a fix; this turns them (and POSIX errors) into the
/// system's own words (`No such file or directory`). Shelf's own errors keep their text.
public enum ErrorReason {
    public static func of(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return SystemCallError.reason(of: posix.code.rawValue) }
        let nsError = error as NSError
        guard nsError.domain == NSCocoaErrorDomain || nsError.domain == NSPOSIXErrorDomain else {
            return String(describing: error)
        }
        if nsError.domain == NSPOSIXErrorDomain { return SystemCallError.reason(of: Int32(nsError.code)) }
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return SystemCallError.reason(of: Int32(underlying.code))
        }
        switch CocoaError.Code(rawValue: nsError.code) {
        case .fileNoSuchFile, .fileReadNoSuchFile: return SystemCallError.reason(of: ENOENT)
        case .fileReadNoPermission, .fileWriteNoPermission: return SystemCallError.reason(of: EACCES)
        case .fileWriteOutOfSpace: return SystemCallError.reason(of: ENOSPC)
        case .fileWriteVolumeReadOnly: return SystemCallError.reason(of: EROFS)
        case .fileWriteFileExists: return SystemCallError.reason(of: EEXIST)
        case .fileReadCorruptFile, .fileReadUnknownStringEncoding, .fileReadInapplicableStringEncoding:
            return "the file is not text in the expected encoding"
        default:
            let text = nsError.localizedDescription
            return text.contains("Error Domain=") ? "error \(nsError.code) from the file system" : text
        }
    }
}
