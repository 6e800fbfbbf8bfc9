import Crypto
import Foundation

/// How a cloud's records and file bytes are written: as they are (a plain cloud) or sealed
/// with the cloud's data key (an encrypted one). Every backend writes and reads through it, so
/// what a cloud holds is decided in one place.
///
/// A sealed object is `0x01 ‖ nonce (12) ‖ ciphertext ‖ tag (16)`, AES-256-GCM under a key
/// derived from the data key, authenticating the object's place (the cloud, and the device,
/// number or address it is stored under): an object copied, replayed or renumbered elsewhere
/// in the cloud does not open. Content is stored under a keyed address, so the cloud still
/// finds bytes it holds twice while two clouds with one file cannot be matched.
public struct CloudSealing: Sendable {
    private let keys: DerivedKeys?
    /// The cloud the objects belong to, authenticated with each.
    private let cloud: String

    /// Records as JSON and bytes as they are.
    public static let plain = CloudSealing(keys: nil, cloud: "")

    /// Sealing with `dataKey` for the cloud whose identity is `cloud`.
    public init(dataKey: CloudDataKey, cloud: String) {
        self.init(keys: DerivedKeys(dataKey), cloud: cloud)
    }

    private init(keys: DerivedKeys?, cloud: String) {
        self.keys = keys
        self.cloud = cloud
    }

    public var isSealed: Bool { keys != nil }

    /// The first byte of every sealed object: the layout, for a later one to be told apart.
    static let objectVersion: UInt8 = 1

    // MARK: Records

    /// `record` as the bytes stored at `place`: its JSON, sealed in an encrypted cloud.
    func encode<T: Encodable>(_ record: T, at place: CloudPlace) throws -> Data {
        try seal(try CloudCoding.encoder.encode(record), at: place)
    }

    /// The record in `bytes` stored at `place`; throws ``CloudSealingError`` when they do not
    /// open there, or do not hold such a record.
    func decode<T: Decodable>(_ type: T.Type, from bytes: Data, at place: CloudPlace) throws -> T {
        let json = try open(bytes, at: place)
        do {
            return try CloudCoding.decoder.decode(type, from: json)
        } catch {
            throw CloudSealingError.notARecord
        }
    }

    // MARK: Bytes

    /// `bytes` as stored at `place`.
    func seal(_ bytes: Data, at place: CloudPlace) throws -> Data {
        guard let keys else { return bytes }
        return try Self.seal(bytes, key: SymmetricKey(data: keys.sealing), nonce: AES.GCM.Nonce(), associatedData: associatedData(place))
    }

    /// What was sealed at `place`; throws when the object was changed, made with another key,
    /// or belongs elsewhere.
    func open(_ object: Data, at place: CloudPlace) throws -> Data {
        guard let keys else { return object }
        return try Self.open(object, key: SymmetricKey(data: keys.sealing), associatedData: associatedData(place))
    }

    /// The name bytes with `hash` are stored under: the hash itself in a plain cloud, an HMAC
    /// of it under the address key in an encrypted one.
    func address(of hash: ContentHash) -> ContentHash {
        guard let keys else { return hash }
        let digest = HMAC<SHA256>.authenticationCode(for: Data(hash.rawValue.utf8), using: SymmetricKey(data: keys.address))
        return ContentHash(hex: Data(digest))
    }

    /// What each object authenticates besides its bytes: where it is.
    private func associatedData(_ place: CloudPlace) -> Data {
        Data("shelf-cloud-object/1\n\(cloud)\n\(place.name)".utf8)
    }

    /// One AEAD seal in the object layout; `nonce` is fresh for every object except in the
    /// known-answer test.
    static func seal(_ bytes: Data, key: SymmetricKey, nonce: AES.GCM.Nonce, associatedData: Data) throws -> Data {
        let box = try AES.GCM.seal(bytes, using: key, nonce: nonce, authenticating: associatedData)
        guard let combined = box.combined else { throw CloudSealingError.notOpened }
        return Data([objectVersion]) + combined
    }

    static func open(_ object: Data, key: SymmetricKey, associatedData: Data) throws -> Data {
        guard object.count >= 1 + 12 + 16, object.first == objectVersion else { throw CloudSealingError.notOpened }
        do {
            return try AES.GCM.open(try AES.GCM.SealedBox(combined: object.dropFirst()), using: key,
                                    authenticating: associatedData)
        } catch {
            throw CloudSealingError.notOpened
        }
    }

    /// The keys a data key derives, each for one job, so no key serves two (as bytes:
    /// swift-crypto's key type is not `Sendable`).
    private struct DerivedKeys: Sendable {
        let sealing: Data
        let address: Data

        init(_ dataKey: CloudDataKey) {
            sealing = dataKey.derived("shelf cloud sealing 1")
            address = dataKey.derived("shelf cloud content address 1")
        }
    }
}

/// Where an object is stored in a cloud: what its sealing authenticates.
enum CloudPlace: Sendable {
    case device(DeviceID)
    case batch(DeviceID, Int64)
    case acknowledgement(DeviceID, Int64)
    case snapshot(DeviceID, Int64)
    /// Bytes under their (keyed) address.
    case content(ContentHash)

    var name: String {
        switch self {
        case .device(let id): "device/\(id)"
        case .batch(let device, let number): "batch/\(device)/\(number)"
        case .acknowledgement(let device, let number): "ack/\(device)/\(number)"
        case .snapshot(let device, let number): "snapshot/\(device)/\(number)"
        case .content(let address): "content/\(address.rawValue)"
        }
    }
}

/// Why an object of an encrypted cloud was refused.
public enum CloudSealingError: Error, Equatable, CustomStringConvertible {
    /// Changed, made with another key, or moved from another place in the cloud.
    case notOpened
    /// It opened, but holds no record Shelf wrote.
    case notARecord

    public var description: String {
        switch self {
        case .notOpened:
            "it does not open with this cloud's key: it was altered, copied from another place in the cloud, or written with another key"
        case .notARecord:
            "it holds no record Shelf wrote"
        }
    }
}
