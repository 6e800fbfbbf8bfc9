import Foundation

/// What linking and syncing refuse, each with the fix.
public enum SyncError: Error, Equatable, CustomStringConvertible {
    case notLinked
    case alreadyLinked(location: String)
    case noSuchDevice(name: String, known: [String])
    case cannotForgetItself
    case invalidDeviceName(String)
    case cloudDidNotArrive(location: String, seconds: Int)
    case passphraseNeeded(location: String)
    case plainCloudThere(location: String)
    /// The cloud is encrypted, and this library holds no key for it.
    case noKeyHere(location: String)
    /// This library holds a key, and the cloud is not encrypted.
    case notEncrypted(location: String)
    case notEncryptedHere
    case alreadyEncrypted(location: String)
    /// Where `shelf cloud encrypt` was to make a new cloud, one is (or is arriving).
    case notANewPlace(location: String)
    /// Items whose bytes are only in the cloud a library is leaving.
    case notDownloaded(count: Int)

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
        case .passphraseNeeded(let location):
            "the cloud at \(location) is encrypted (or --encrypt makes it so) and needs its passphrase: type it at the prompt, or name a file holding it with --passphrase-file or SHELF_CLOUD_PASSPHRASE_FILE. Nothing was linked."
        case .plainCloudThere(let location):
            "\(location) holds a cloud that is not encrypted, and a cloud never changes once written; nothing was linked. Link it without --encrypt, or move to an encrypted cloud with `shelf cloud encrypt NEW-DIR|URL` on a device linked to it."
        case .noKeyHere(let location):
            "the cloud at \(location) is encrypted, and this library holds no key for it (its cloud-key.json is missing); sync stopped and nothing was changed. `shelf cloud unlink`, then link again with the cloud's passphrase."
        case .notEncrypted(let location):
            "this library linked to an encrypted cloud at \(location), but the cloud there is not encrypted; sync stopped and nothing was sent. Put the right cloud back, or `shelf cloud unlink` and link this one."
        case .notEncryptedHere:
            "this library is linked to a cloud that is not encrypted; there is no passphrase to change. Move to an encrypted cloud with `shelf cloud encrypt NEW-DIR|URL`."
        case .alreadyEncrypted(let location):
            "the cloud at \(location) is encrypted already; nothing was changed. To change its passphrase: `shelf cloud passphrase`."
        case .notANewPlace(let location):
            "\(location) holds a cloud already, and `shelf cloud encrypt` makes a new one; nothing was changed. Name a new or empty folder (or a new PostgreSQL cloud); to join the cloud there, `shelf cloud unlink`, then `shelf cloud link \(location)`."
        case .notDownloaded(let count):
            "\(count) item\(count == 1 ? " is" : "s are") not downloaded from the cloud this library leaves; nothing was changed. `shelf download --all`, then try again."
        case .invalidDeviceName(let name):
            "\(name.debugDescription) cannot name a device: use 1 to \(CloudInputRules.maxDeviceNameBytes) bytes without / or control characters (--device NAME)."
        }
    }
}
