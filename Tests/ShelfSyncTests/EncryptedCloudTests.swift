import Crypto
import Foundation
import ShelfModel
import ShelfStore
import Testing
import TestDevices
import TestSupport
import TestTraits
@testable import ShelfSync

/// Encrypted clouds: their keys, and what a cloud that was tampered with gets (refusal, never
/// an applied change). The cloud behaviour suite runs against an encrypted folder cloud too
/// (`CloudKind.encryptedFolder`).
@Suite(.scratchFolders) struct EncryptedCloudTests {
    // MARK: Keys

    @Test func aWrongPassphraseLinksNothingAndTheRightOneOrTheRecoveryKeyJoins() throws {
        let devices = try Devices(cloud: .encryptedFolder)
        let a = try devices.device("a")
        let id = try a.write("Notes/Secret.md", "only for us\n")
        try a.sync()

        let stranger = try devices.library("b")
        #expect(throws: CloudKeyError.wrongSecret) {
            try CloudLinking.link(stranger, to: try devices.cloud(for: "b"), deviceName: "b", passphrase: { _ in "wrong horse" })
        }
        #expect(try stranger.cloudLink() == nil)
        #expect(!FileManager.default.fileExists(atPath: stranger.layout.cloudKey.path))
        #expect(throws: SyncError.passphraseNeeded(location: try devices.cloud(for: "b").location)) {
            try CloudLinking.link(stranger, to: try devices.cloud(for: "b"), deviceName: "b")
        }

        let b = try devices.device("b")
        try b.sync()
        #expect(try b.text(id: id) == "only for us\n")
        let keyFile = try FileManager.default.attributesOfItem(atPath: b.store.layout.cloudKey.path)
        #expect((keyFile[.posixPermissions] as? Int) == 0o600, "the key is readable by its owner only")
    }

    @Test func theRecoveryKeyPrintedOnceOpensTheCloud() throws {
        let devices = try Devices()
        let maker = try devices.library("a")
        let made = try CloudLinking.link(maker, to: try devices.cloud(for: "a"), deviceName: "a", encrypt: true,
                                         passphrase: { _ in "a passphrase since forgotten" })
        let recovery = try #require(made.recoveryKey)
        let a = try devices.device("a", linked: maker)
        let id = try a.write("Notes/Kept.md", "kept\n")
        try a.sync()

        let b = try devices.library("b")
        try CloudLinking.link(b, to: try devices.cloud(for: "b"), deviceName: "b", passphrase: { _ in recovery.text.lowercased() })
        let device = try devices.device("b", linked: b)
        try device.sync()
        #expect(try device.text(id: id) == "kept\n")
        #expect(RecoveryKey(recovery.text) == recovery)
    }

    @Test func aPassphraseChangeRewrapsTheKeyAndADeviceOfflineMeanwhileKeepsSyncing() throws {
        let devices = try Devices(cloud: .encryptedFolder)
        let a = try devices.device("a")
        let b = try devices.device("b")
        try devices.settle(a, b)
        let before = try devices.cloud(for: "a").keyEnvelopes()

        // b is offline: it does not sync while a changes the passphrase.
        try CloudLinking.changePassphrase(of: a.store, in: try devices.cloud(for: "a"), to: "a new passphrase")
        let after = try devices.cloud(for: "a").keyEnvelopes()
        #expect(after.filter { $0.kind == .passphrase }.map(\.number) == [2], "the older passphrase envelope is gone")
        #expect(after.first { $0.kind == .recovery } == before.first { $0.kind == .recovery })
        let id = try a.write("Notes/After.md", "written after the change\n")
        try a.sync()

        try b.sync()
        #expect(try b.text(id: id) == "written after the change\n")

        let late = try devices.library("c")
        #expect(throws: CloudKeyError.wrongSecret) {
            try CloudLinking.link(late, to: try devices.cloud(for: "c"), deviceName: "c", passphrase: { _ in Devices.passphrase })
        }
        try CloudLinking.link(late, to: try devices.cloud(for: "c"), deviceName: "c", passphrase: { _ in "a new passphrase" })
        let c = try devices.device("c", linked: late)
        try c.sync()
        #expect(try c.text(id: id) == "written after the change\n")
    }

    /// A device unwraps the key once, when it links: its rounds never read the envelopes nor ask
    /// for the passphrase (which a mounted library does not have), so they sync with the cloud's
    /// key envelopes gone.
    @Test func roundsSyncWithoutTheKeyEnvelopes() throws {
        let devices = try Devices(cloud: .encryptedFolder)
        let a = try devices.device("a")
        let b = try devices.device("b")
        try FileManager.default.removeItem(at: devices.cloudFolder(for: "a").appendingPathComponent("keys"))
        let id = try a.write("Notes/After.md", "no envelope needed\n")
        try a.sync()
        try b.sync()
        #expect(try b.text(id: id) == "no envelope needed\n")
        #expect(try b.store.cloudLink()?.error == nil)
    }

    /// A file-sync tool may bring the identity before the keys: a device joining takes the
    /// cloud as still arriving (here with no time to wait: it says so) until they are there.
    @Test func aJoiningDeviceWaitsForKeysThatArriveAfterTheIdentity() throws {
        let devices = try Devices(delayed: true, cloud: .encryptedFolder)
        let a = try devices.device("a")
        let id = try a.write("Notes/One.md", "one\n")
        try a.sync()
        let b = try devices.library("b")
        try FileManager.default.createDirectory(at: devices.cloudFolder(for: "b"), withIntermediateDirectories: true)
        try devices.deliver(only: Self.allButKeys)
        let location = devices.cloudFolder(for: "b").path
        #expect(throws: SyncError.cloudDidNotArrive(location: location, seconds: 0)) {
            try CloudLinking.link(b, to: FolderCloud(folder: devices.cloudFolder(for: "b")), deviceName: "b", join: true,
                                  passphrase: { _ in Devices.passphrase }, wait: 0)
        }
        #expect(try b.cloudLink() == nil)

        try devices.deliver()
        try CloudLinking.link(b, to: FolderCloud(folder: devices.cloudFolder(for: "b")), deviceName: "b", join: true,
                              passphrase: { _ in Devices.passphrase }, wait: 0)
        let device = try devices.device("b", linked: b)
        try device.sync()
        #expect(try device.text(id: id) == "one\n")
    }

    private static func allButKeys(_ path: String, _ device: String) -> Bool { !path.hasPrefix("keys/") }

    @Test func aDeviceWithoutItsKeyAndAPlainCloudWhereAnEncryptedOneWasStopSync() throws {
        let devices = try Devices(cloud: .encryptedFolder)
        let a = try devices.device("a")
        try a.write("Notes/One.md", "one\n")
        try a.sync()
        try FileManager.default.removeItem(at: a.store.layout.cloudKey)
        let keyless = try devices.device("a", linked: a.store)
        #expect(throws: SyncError.noKeyHere(location: try devices.cloud(for: "a").location)) { try keyless.sync() }
        #expect(try a.store.cloudLink()?.error?.contains("holds no key") == true)

        // A library holding a key, whose cloud is plain (the folder was swapped): nothing is sent.
        let plain = try Devices()
        let p = try plain.device("p")
        let sealedElsewhere = p.engine.cloud.sealed(by: CloudSealing(dataKey: .random(), cloud: "x"))
        #expect(throws: SyncError.notEncrypted(location: sealedElsewhere.location)) {
            try SyncEngine(store: p.store, cloud: sealedElsewhere).sync()
        }
    }

    @Test func anEncryptedCloudIsAFormatAShelfBeforeEncryptionRefuses() throws {
        let devices = try Devices(cloud: .encryptedFolder)
        _ = try devices.device("a")
        let identity = try devices.cloud(for: "a").identity()
        #expect(identity.format == CloudIdentity.encryptedFormat)
        #expect(identity.isEncrypted)
        // The Shelf before encryption read up to the plain format.
        #expect(CloudIdentity.encryptedFormat > CloudIdentity.plainFormat)
        #expect(CloudIdentity.currentFormat == CloudIdentity.encryptedFormat)
    }

    /// Content is stored under an address keyed by each cloud's own data key: two clouds that
    /// hold the same file show nothing in common, and neither shows the file's plain hash.
    @Test func twoCloudsHoldingTheSameFileShareNoContentAddress() throws {
        let text = "the same bytes in two clouds\n"
        let addresses = try (0..<2).map { _ in
            let devices = try Devices(cloud: .encryptedFolder)
            let a = try devices.device("a")
            _ = try a.write("Notes/Same.md", text)
            try a.sync()
            return Self.contentNames(in: devices.cloudFolder(for: "a"))
        }
        #expect(!addresses[0].isEmpty && !addresses[1].isEmpty, "\(addresses)")
        #expect(addresses[0].isDisjoint(with: addresses[1]), "\(addresses)")
        let plain = ContentHash(of: Data(text.utf8)).rawValue
        #expect(!addresses[0].contains(plain) && !addresses[1].contains(plain), "\(addresses)")
    }

    /// The names of the content files in a cloud folder (64 hex digits each).
    private static func contentNames(in cloud: URL) -> Set<String> {
        let content = cloud.appendingPathComponent("content")
        let paths = FileManager.default.enumerator(atPath: content.path)?.allObjects as? [String] ?? []
        return Set(paths.map { URL(fileURLWithPath: $0).lastPathComponent }.filter { $0.count == 64 })
    }

    // MARK: Tampering (folder cloud)

    /// A device's log file in the cloud folder, by number.
    private func batchFile(_ devices: Devices, of device: Device, _ number: Int64) throws -> URL {
        let id = try #require(try device.store.cloudLink()?.device)
        return devices.cloudFolder(for: "a").appendingPathComponent("log/\(id)/" + String(format: "%012lld.json", number))
    }

    /// a pushes three batches (One, Two, Three) to a new cloud of `kind`; b has read none of them.
    static func threeBatches(on kind: CloudKind = .encryptedFolder) throws -> (Devices, Device, Device) {
        let devices = try Devices(cloud: kind)
        let a = try devices.device("a")
        let b = try devices.device("b")
        for name in ["One", "Two", "Three"] {
            try a.write("Notes/\(name).md", "\(name)\n")
            try a.sync()
        }
        return (devices, a, b)
    }

    @Test func aFlippedBitHoldsItsBatchBackAndSaysSo() throws {
        let (devices, a, b) = try Self.threeBatches()
        let file = try batchFile(devices, of: a, 2)
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count / 2] ^= 0x01
        try FileManager.default.removeItem(at: file)
        try bytes.write(to: file)

        try b.sync()
        #expect(try b.store.record(atPath: "Notes/One.md") != nil)
        #expect(try b.store.record(atPath: "Notes/Two.md") == nil, "nothing of the altered batch is applied")
        #expect(try b.store.record(atPath: "Notes/Three.md") == nil, "what follows it waits")
        let waiting = try #require(try b.store.cloudLink()?.waiting)
        #expect(waiting.contains("batch 2 of device a is refused"), "\(waiting)")
        #expect(waiting.contains("does not open with this cloud's key"), "\(waiting)")
    }

    @Test func anOlderBatchReplayedUnderANewerNumberIsRefused() throws {
        let (devices, a, b) = try Self.threeBatches()
        let third = try batchFile(devices, of: a, 3)
        try FileManager.default.removeItem(at: third)
        try FileManager.default.copyItem(at: try batchFile(devices, of: a, 1), to: third)

        try b.sync()
        #expect(try b.store.record(atPath: "Notes/Two.md") != nil)
        #expect(try b.store.record(atPath: "Notes/Three.md") == nil)
        let waiting = try #require(try b.store.cloudLink()?.waiting)
        #expect(waiting.contains("batch 3 of device a is refused"), "\(waiting)")
    }

    /// Whoever holds the cloud but not the key can write only what no device opens.
    @Test func aBatchWrittenWithoutTheKeyIsRefused() throws {
        let (devices, a, b) = try Self.threeBatches()
        let writer = try #require(try a.store.cloudLink()?.device)
        let forged = try #require(try devices.cloud(for: "a").batch(of: writer, number: 3))
        var fourth = ChangeBatch(device: writer, number: 4, changes: forged.changes)
        fourth.changes[0].id = "\(writer)-4-0"
        fourth.changes[0].title = "Forged"
        try FolderCloud(folder: devices.cloudFolder(for: "a")).append(fourth)

        try b.sync()
        #expect(try b.store.record(atPath: "Notes/Three.md") != nil)
        #expect(try b.store.summaries().allSatisfy(Self.isNotForged))
        let waiting = try #require(try b.store.cloudLink()?.waiting)
        #expect(waiting.contains("batch 4 of device a is refused"), "\(waiting)")
    }

    private static func isNotForged(_ summary: ItemSummary) -> Bool { summary.title != "Forged" }

    @Test func bytesCopiedToAnotherAddressAreRefusedAndTheItemStaysAPlaceholder() throws {
        let (devices, _, b) = try Self.threeBatches()
        try b.sync()
        let content = try #require(FileManager.default.enumerator(at: devices.cloudFolder(for: "a").appendingPathComponent("content"),
                                                                  includingPropertiesForKeys: nil)?.allObjects as? [URL])
            .filter { $0.lastPathComponent.count == 64 }
        #expect(content.count == 3)
        try FileManager.default.removeItem(at: content[1])
        try FileManager.default.copyItem(at: content[0], to: content[1])

        let ids = try ["One", "Two", "Three"].map { try #require(try b.store.record(atPath: "Notes/\($0).md")?.item.id) }
        var refused = 0
        for id in ids {
            do {
                try b.engine.download(id)
            } catch let error as CloudError {
                guard case .damaged(_, let reason) = error else { throw error }
                #expect(reason.contains("does not open with this cloud's key"))
                #expect(try b.store.summary(id: id)?.isPlaceholder == true, "nothing was written to the library")
                refused += 1
            }
        }
        #expect(refused == 1)
    }

    @Test func aConflictCopyThatDiffersHoldsItsBatchBackAndOneThatRepeatsItDoesNot() throws {
        let (devices, a, b) = try Self.threeBatches()
        let second = try batchFile(devices, of: a, 2)
        let syncthing = second.deletingLastPathComponent().appendingPathComponent("000000000002.sync-conflict-20261127-120000-ABCDEFG.json")
        try FileManager.default.copyItem(at: try batchFile(devices, of: a, 3), to: syncthing)

        try b.sync()
        #expect(try b.store.record(atPath: "Notes/One.md") != nil)
        #expect(try b.store.record(atPath: "Notes/Two.md") == nil)
        let waiting = try #require(try b.store.cloudLink()?.waiting)
        #expect(waiting.contains("conflict copy of batch 2"), "\(waiting)")

        // A copy that holds the same batch (sealed again, so other bytes) is harmless.
        try FileManager.default.removeItem(at: syncthing)
        let cloud = try #require(b.engine.cloud as? FolderCloud)
        let writer = try #require(try a.store.cloudLink()?.device)
        let batch = try #require(try cloud.batch(of: writer, number: 2))
        try cloud.sealing.encode(batch, at: .batch(batch.device, 2)).write(to: syncthing)
        try b.sync()
        #expect(try b.text("Notes/Three.md") == "Three\n")
    }

    // MARK: The format, pinned

    /// Fixed key, nonce and place give these bytes: a change of layout, derivation or
    /// associated data fails here before it strands a cloud (docs/cloud-encryption.md).
    @Test func theSealedObjectLayoutIsPinned() throws {
        let dataKey = try CloudDataKey(bytes: Data((0..<32).map { UInt8($0) }))
        let sealing = SymmetricKey(data: dataKey.derived("shelf cloud sealing 1"))
        let object = try CloudSealing.seal(Data("{\"a\":1}".utf8), key: sealing, nonce: try AES.GCM.Nonce(data: Data(repeating: 7, count: 12)),
                                           associatedData: Data("shelf-cloud-object/1\ncloud\nbatch/device/1".utf8))
        #expect(object.hex == "010707070707070707070707070c4b8039339e95ada74e6a4e508e3d060201c8fce5db49")
        let address = CloudSealing(dataKey: dataKey, cloud: "cloud").address(of: ContentHash(of: Data("hello\n".utf8)))
        #expect(address.rawValue == "2773a8c3d1a909691e0da972168d94018c080736a4dcb2efd717cfc8f42e3e3a")
    }

    /// RFC 7914's third scrypt test vector, through the parameters an envelope stores.
    @Test func scryptDerivesTheRFCsKey() throws {
        let parameters = ScryptParameters(costs: .init(rounds: 16384, blockSize: 8, parallelism: 1), salt: Data("SodiumChloride".utf8))
        let key = try parameters.key(for: "pleaseletmein")
        #expect(key.withUnsafeBytes { Data($0) }.hex == "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2")
    }
}

extension Data {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
