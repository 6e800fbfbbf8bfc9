import Foundation
import ShelfStore
import ShelfSystem

/// The data key of the encrypted cloud a library is linked to, kept in the library
/// (`cloud-key.json`, mode 0600) so that a mounted library syncs unattended: derived once, when
/// the device links or the passphrase changes, never per round. Whoever holds the unlocked
/// device holds the key; the cloud never does.
public enum DeviceCloudKey {
    private struct Stored: Codable {
        var cloud: String
        var key: Data
    }

    static func save(_ key: CloudDataKey, cloud: String, in store: LibraryStore) throws {
        let bytes = try CloudCoding.encoder.encode(Stored(cloud: cloud, key: key.bytes))
        do {
            try AtomicFile.write(bytes, to: store.layout.cloudKey.path, permissions: 0o600)
        } catch {
            throw CloudKeyError.notKept(reason: "\(error)")
        }
    }

    /// The key this library holds, and the cloud it is for; nil for a library linked to a plain
    /// cloud (or to none).
    static func load(from store: LibraryStore) throws -> (cloud: String, key: CloudDataKey)? {
        let url = store.layout.cloudKey
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        guard let bytes = FileManager.default.contents(atPath: url.path),
              let stored = try? CloudCoding.decoder.decode(Stored.self, from: bytes) else { throw CloudKeyError.notAKey }
        return (stored.cloud, try CloudDataKey(bytes: stored.key))
    }

    /// Whether the library holds a cloud key: whether the cloud it is linked to is encrypted.
    public static func isHeld(by store: LibraryStore) -> Bool {
        FileManager.default.fileExists(atPath: store.layout.cloudKey.path)
    }

    static func remove(from store: LibraryStore) throws {
        guard isHeld(by: store) else { return }
        try FileEntries.removeFile(store.layout.cloudKey.path)
    }

    /// `cloud` as this library reads and writes it: sealed with the key it holds, if any.
    public static func open(_ cloud: any CloudBackend, for store: LibraryStore) throws -> any CloudBackend {
        guard let (identity, key) = try load(from: store) else { return cloud }
        return cloud.sealed(by: CloudSealing(dataKey: key, cloud: identity))
    }
}
