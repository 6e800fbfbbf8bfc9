import FuseKit
import ShelfStore

/// What the kernel reports for each refusal of the store. Library-level failures have no precise
/// errno: they become `EIO`, and the handler logs the message that names the fix.
extension StoreError: ErrnoConvertible {
    public var errno: Errno {
        switch self {
        case .itemNotFound: .noEntry
        case .pathTaken, .itemExists: .exists
        case .invalidPath: .invalid
        case .kindMismatch: .crossDevice
        case .libraryBusy, .versionConflict: .busy
        case .libraryMissing, .notALibrary, .libraryUnreadable, .damagedRecord: .ioError
        }
    }
}
