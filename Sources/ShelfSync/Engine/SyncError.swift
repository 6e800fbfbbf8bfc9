import Foundation

/// What linking and syncing refuse, each with the fix.
public enum SyncError: Error, Equatable, CustomStringConvertible {
    case notLinked
    case alreadyLinked(location: String)
    case noSuchDevice(name: String, known: [String])
    case cannotForgetItself
    case invalidDeviceName(String)
    case cloudDidNotArrive(location: String, seconds: Int)

    public var description: String {
        switch self {
        case .notLinked:
            "this library is not linked to a cloud; link it with `shelf cloud link DIR`."
        case .alreadyLinked(let location):
            "this library is already linked to the cloud at \(location); `shelf cloud unlink` first to link another."
        case .noSuchDevice(let name, let known):
            "no single device is called \(name); the cloud knows: \(known.joined(separator: ", ")). Name one by its id."
        case .cannotForgetItself:
            "a device cannot forget itself; run forget-device on another device, or `shelf cloud unlink` here."
        case .cloudDidNotArrive(let location, let seconds):
            "no Shelf cloud arrived at \(location) within \(seconds) s; nothing was linked. Check that the file-sync tool shares the folder (and that another device linked it), then link again — or drop --join to make a new cloud there."
        case .invalidDeviceName(let name):
            "\(name.debugDescription) cannot name a device: use 1 to \(CloudInputRules.maxDeviceNameBytes) bytes without / or control characters (--device NAME)."
        }
    }
}
