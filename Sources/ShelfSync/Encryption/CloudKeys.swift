import _CryptoExtras
import Crypto
import Foundation

/// The random key that encrypts everything in an encrypted cloud. It never leaves a device
/// unwrapped: the cloud holds it only wrapped (``KeyEnvelope``), by the passphrase and by the
/// recovery key.
public struct CloudDataKey: Sendable, Equatable {
    public let bytes: Data

    public init(bytes: Data) throws {
        guard bytes.count == Self.byteCount else { throw CloudKeyError.notAKey }
        self.bytes = bytes
    }

    public static func random() -> CloudDataKey {
        CloudDataKey(checked: SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
    }

    private init(checked bytes: Data) { self.bytes = bytes }

    static let byteCount = 32

    /// A key for one job (`purpose` names it), derived with HKDF-SHA256.
    func derived(_ purpose: String) -> Data {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes), salt: Data("shelf-cloud".utf8),
                               info: Data(purpose.utf8), outputByteCount: 32).withUnsafeBytes { Data($0) }
    }
}

/// The data key wrapped by one secret, as the cloud holds it: by a key scrypt derives from the
/// passphrase (the newest passphrase envelope counts), or by the recovery key. Anyone may read
/// an envelope; only the secret opens it.
public struct KeyEnvelope: Codable, Hashable, Sendable {
    public enum Kind: String, Codable, Sendable {
        case passphrase
        case recovery
    }

    public var kind: Kind
    /// Passphrase envelopes are numbered 1, 2, 3… as the passphrase changes; the recovery
    /// envelope is 0.
    public var number: Int64
    /// The passphrase's key derivation; nil for the recovery key (random already).
    public var scrypt: ScryptParameters?
    /// The data key as a sealed object (``CloudSealing``'s layout) under the wrapping key.
    public var wrapped: Data

    /// The name the envelope is stored under: `passphrase-3`, `recovery-0`.
    public var name: String { "\(kind.rawValue)-\(number)" }

    /// Wraps `dataKey` for the cloud `cloud` with `passphrase`.
    static func passphrase(_ passphrase: String, number: Int64, wrapping dataKey: CloudDataKey, cloud: String) throws -> KeyEnvelope {
        let scrypt = ScryptParameters(costs: .standard, salt: Data(SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }))
        return try KeyEnvelope(kind: .passphrase, number: number, scrypt: scrypt, wrapped: Data())
            .wrapping(dataKey, with: try scrypt.key(for: passphrase), cloud: cloud)
    }

    static func recovery(_ recoveryKey: RecoveryKey, wrapping dataKey: CloudDataKey, cloud: String) throws -> KeyEnvelope {
        try KeyEnvelope(kind: .recovery, number: 0, scrypt: nil, wrapped: Data())
            .wrapping(dataKey, with: recoveryKey.wrappingKey, cloud: cloud)
    }

    /// This envelope holding `dataKey` sealed under `wrappingKey`.
    private func wrapping(_ dataKey: CloudDataKey, with wrappingKey: SymmetricKey, cloud: String) throws -> KeyEnvelope {
        var envelope = self
        envelope.wrapped = try CloudSealing.seal(dataKey.bytes, key: wrappingKey, nonce: AES.GCM.Nonce(),
                                                 associatedData: associatedData(cloud: cloud))
        return envelope
    }

    /// The data key, if `wrappingKey` opens this envelope of the cloud `cloud`.
    func open(with wrappingKey: SymmetricKey, cloud: String) -> CloudDataKey? {
        guard let bytes = try? CloudSealing.open(wrapped, key: wrappingKey, associatedData: associatedData(cloud: cloud)) else {
            return nil
        }
        return try? CloudDataKey(bytes: bytes)
    }

    /// An envelope authenticates its cloud, kind and number: one cannot stand in for another.
    private func associatedData(cloud: String) -> Data {
        Data("shelf-cloud-key/1\n\(cloud)\n\(name)".utf8)
    }
}

/// scrypt's costs and salt for one passphrase envelope, stored with it so that a later Shelf
/// may raise the costs without stranding older envelopes.
public struct ScryptParameters: Codable, Hashable, Sendable {
    /// N, r and p.
    public struct Costs: Hashable, Sendable {
        public var rounds: Int
        public var blockSize: Int
        public var parallelism: Int

        /// Obsidian Sync's: N = 32768, r = 8, p = 1 (32 MiB, a fraction of a second).
        public static let standard = Costs(rounds: 32768, blockSize: 8, parallelism: 1)
    }

    public var n: Int
    public var r: Int
    public var p: Int
    public var salt: Data

    init(costs: Costs, salt: Data) {
        n = costs.rounds
        r = costs.blockSize
        p = costs.parallelism
        self.salt = salt
    }

    /// Costs a cloud's envelope may ask for: enough to be a real derivation, bounded so that an
    /// envelope someone put in the cloud cannot make a device derive for hours or run out of
    /// memory.
    var isReasonable: Bool {
        (1024...(1 << 20)).contains(n) && n & (n - 1) == 0 && (1...32).contains(r) && (1...16).contains(p)
            && n * r * 128 <= 1 << 30 && (8...64).contains(salt.count)
    }

    /// The wrapping key `passphrase` derives.
    func key(for passphrase: String) throws -> SymmetricKey {
        guard isReasonable else { throw CloudKeyError.unreasonableDerivation(n: n, r: r, p: p) }
        return try KDF.Scrypt.deriveKey(from: Data(passphrase.utf8), salt: salt, outputByteCount: 32, rounds: n,
                                        blockSize: r, parallelism: p)
    }
}

/// The key `--encrypt` prints once: 256 random bits that also unwrap the data key, written as
/// 13 groups of four base32 letters and digits, for when the passphrase is lost.
public struct RecoveryKey: Sendable, Equatable {
    let bytes: Data

    public static func random() -> RecoveryKey {
        RecoveryKey(bytes: SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
    }

    init(bytes: Data) { self.bytes = bytes }

    /// The key as typed: groups of the RFC 4648 base32 alphabet; case, spaces and dashes do
    /// not matter. Nil for anything else (a passphrase).
    public init?(_ text: String) {
        let letters = text.uppercased().filter { !$0.isWhitespace && $0 != "-" }
        guard letters.count == Self.letterCount else { return nil }
        var bits = 0
        var value = 0
        var bytes = Data()
        for letter in letters {
            guard let digit = Self.alphabet.firstIndex(of: letter) else { return nil }
            value = (value << 5) | digit
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8((value >> bits) & 0xff))
            }
        }
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    public var text: String {
        var letters: [Character] = []
        var bits = 0
        var value = 0
        for byte in bytes {
            value = (value << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                letters.append(Self.alphabet[(value >> bits) & 31])
            }
        }
        if bits > 0 { letters.append(Self.alphabet[(value << (5 - bits)) & 31]) }
        return stride(from: 0, to: letters.count, by: 4).map { String(letters[$0..<min($0 + 4, letters.count)]) }
            .joined(separator: "-")
    }

    var wrappingKey: SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: bytes), salt: Data("shelf-cloud".utf8),
                               info: Data("shelf cloud recovery 1".utf8), outputByteCount: 32)
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    private static let letterCount = 52
}

/// The keys an encrypted cloud is made with: its data key, the envelopes the cloud stores, and
/// the recovery key to show its maker once.
public struct NewCloudKeys: Sendable {
    public let dataKey: CloudDataKey
    public let envelopes: [KeyEnvelope]
    public let recoveryKey: RecoveryKey

    init(cloud: String, passphrase: String) throws {
        dataKey = .random()
        recoveryKey = .random()
        envelopes = [
            try .passphrase(passphrase, number: 1, wrapping: dataKey, cloud: cloud),
            try .recovery(recoveryKey, wrapping: dataKey, cloud: cloud),
        ]
    }
}

extension Array where Element == KeyEnvelope {
    /// The data key `secret` unwraps: a recovery key opens the recovery envelope, anything else
    /// is a passphrase for the newest passphrase envelope.
    func unlock(with secret: String, cloud: String) throws -> CloudDataKey {
        if let recovery = RecoveryKey(secret), let envelope = first(where: { $0.kind == .recovery }),
           let key = envelope.open(with: recovery.wrappingKey, cloud: cloud) {
            return key
        }
        guard let envelope = newestPassphrase else { throw CloudKeyError.noEnvelope }
        guard let scrypt = envelope.scrypt else { throw CloudKeyError.wrongSecret }
        guard let key = envelope.open(with: try scrypt.key(for: secret), cloud: cloud) else { throw CloudKeyError.wrongSecret }
        return key
    }

    var newestPassphrase: KeyEnvelope? {
        filter { $0.kind == .passphrase }.max { $0.number < $1.number }
    }
}

/// What unlocking an encrypted cloud refuses, each with the fix.
public enum CloudKeyError: Error, Equatable, CustomStringConvertible {
    case wrongSecret
    /// An encrypted cloud whose key envelopes have not arrived (or were removed).
    case noEnvelope
    case notAKey
    /// The key could not be written into the library.
    case notKept(reason: String)
    case unreasonableDerivation(n: Int, r: Int, p: Int)

    public var description: String {
        switch self {
        case .wrongSecret:
            "the passphrase does not open this cloud's key (nor is it its recovery key); nothing was changed. Try again, or use the recovery key printed when the cloud was made."
        case .noEnvelope:
            "the cloud is encrypted but holds no wrapped key yet (a file-sync tool may still be bringing its keys/ folder); nothing was changed. Wait for it, then try again."
        case .notAKey:
            "this device's key for the encrypted cloud is damaged; `shelf cloud unlink`, then link again with the passphrase."
        case .notKept(let reason):
            "cannot keep the cloud's key in the library (\(reason)); nothing was linked. Check the library folder's permissions."
        case .unreasonableDerivation(let n, let r, let p):
            "the cloud's key asks for a passphrase derivation this Shelf refuses (scrypt N=\(n), r=\(r), p=\(p)); nothing was changed. Was the cloud's keys/ folder tampered with?"
        }
    }
}
