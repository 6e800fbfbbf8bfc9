import Foundation

/// A cloud copy that the devices of one library share: the protocol every backend (a folder,
/// PostgreSQL) implements, so the sync engine and its behaviour tests run against each.
///
/// The cloud holds four things, each written once and never changed afterwards, so no device
/// ever needs a lock on it: its identity, a record per device, each device's change log as
/// numbered batches, and file contents named by their hash. Deletions are changes like any
/// other (tombstones): what a cloud does not hold is never taken for a deletion. An encrypted
/// cloud holds the same, each record and file sealed (``CloudSealing``), its bytes under keyed
/// addresses, and beside them the key envelopes.
public protocol CloudBackend: Sendable {
    /// Where the cloud is, as the user named it (a folder path, a URL): for messages.
    var location: String { get }

    /// Local folders in which a new file means new changes, for a device to wake on (empty
    /// for a backend that pushes its news, or cannot be watched).
    var changeFolders: [URL] { get }

    /// Local folders in which the bytes `hashes` will arrive, for a device whose changes wait
    /// for them to wake on (empty where they cannot be watched).
    func contentFolders(for hashes: Set<ContentHash>) -> [URL]

    /// The cloud's identity. Throws `CloudError` when there is no cloud there (missing, empty,
    /// unreadable, not a Shelf cloud) or one written by a newer Shelf.
    func identity() throws -> CloudIdentity

    /// Identities set aside where two clouds made at one place met (a file-sync tool keeps one
    /// `shelf-cloud.json` and renames the other); empty where that cannot happen.
    func identitiesSetAside() throws -> [CloudIdentity]

    /// Makes a new cloud; refuses (`CloudError.notACloud`) where anything is stored already.
    /// `keys`: an encrypted cloud's key envelopes, stored before the identity that says they
    /// are there.
    func create(_ identity: CloudIdentity, keys: [KeyEnvelope]) throws

    /// How this backend writes and reads records and bytes: plain, or sealed with the cloud's
    /// data key. Identities and key envelopes are never sealed.
    var sealing: CloudSealing { get }
    /// This cloud, written and read through `sealing`.
    func sealed(by sealing: CloudSealing) -> any CloudBackend

    /// An encrypted cloud's key envelopes (each the data key wrapped by one secret).
    func keyEnvelopes() throws -> [KeyEnvelope]
    /// Stores a passphrase envelope under its number, then removes the older passphrase
    /// envelopes: after a passphrase change the old passphrase opens nothing.
    func putPassphraseEnvelope(_ envelope: KeyEnvelope) throws

    /// Records a device that joins the cloud (written once, by that device).
    func register(_ device: DeviceRecord) throws
    /// Every device that ever joined, retired ones included; a damaged record is listed as
    /// such, never thrown (a cloud that cannot be listed is).
    func devices() throws -> CloudDevices

    /// Stores one batch of a device's changes under its number. A batch is written once: a
    /// number already stored is kept as it is (a push repeated after a crash finds it there).
    func append(_ batch: ChangeBatch) throws
    /// The batch `number` of `device`, if stored. One larger than
    /// ``CloudInputRules/maxBatchBytes`` is not read: it comes as an unreadable batch
    /// (``ChangeBatch/unreadable(device:number:reason:)``), which the engine reports.
    func batch(of device: DeviceID, number: Int64) throws -> ChangeBatch?
    /// Batches past `cursor`, oldest first within each device, at most about `limit` changes,
    /// and the cursor after them. A batch that cannot be read yet (a file-sync tool still
    /// delivering it) ends that device's run until it can; one that never will (too large, not
    /// a batch) comes unreadable, as from ``batch(of:number:)``.
    func batches(after cursor: CloudCursor, limit: Int) throws -> (batches: [ChangeBatch], cursor: CloudCursor)

    /// Marks `device` retired (`shelf cloud forget-device`): its reading no longer holds back
    /// the removal of logs, and its own logs may go once a snapshot covers them.
    func retire(_ device: DeviceID) throws
    func retiredDevices() throws -> Set<DeviceID>

    /// Publishes how far a device has read; the one with the highest number counts, and the
    /// device may remove its older ones.
    func acknowledge(_ ack: DeviceAck) throws
    /// Each device's newest acknowledgement.
    func acknowledgements() throws -> [DeviceID: DeviceAck]

    func putSnapshot(_ snapshot: CloudSnapshot) throws
    /// The snapshot with the most batches behind it, if any.
    func latestSnapshot() throws -> CloudSnapshot?

    /// Removes `device`'s batches numbered up to `number` (every device has read them, and a
    /// snapshot covers them); returns how many.
    func removeBatches(of device: DeviceID, through number: Int64) throws -> Int
    /// Removes the stored bytes whose hash is not in `keeping` and that were not stored or
    /// reused since `unusedSince`; returns how many.
    func removeContent(except keeping: Set<ContentHash>, unusedSince: Date) throws -> Int

    /// Stores file bytes under their hash, only if that hash is not stored yet: a stored file
    /// is never rewritten nor touched (a database may note that the bytes were used again).
    /// `device` stores them: in a folder, each device writes only its own files.
    func putContent(_ bytes: Data, hash: ContentHash, by device: DeviceID) throws
    /// The bytes stored under `hash`, checked against it; nil when they have not arrived.
    func content(_ hash: ContentHash) throws -> Data?
    /// Whether bytes are stored under `hash` (without reading them).
    func hasContent(_ hash: ContentHash) throws -> Bool

    /// Starts calling `news` whenever another device may have pushed, for a backend that pushes
    /// its news; nil for one whose ``changeFolders`` are watched instead.
    func watchNews(_ news: @escaping @Sendable () -> Void) -> (any CloudNewsWatch)?
}

extension CloudBackend {
    /// Makes a new plain cloud.
    public func create(_ identity: CloudIdentity) throws {
        try create(identity, keys: [])
    }

    public func identitiesSetAside() throws -> [CloudIdentity] { [] }

    public func contentFolders(for hashes: Set<ContentHash>) -> [URL] { [] }

    public func watchNews(_ news: @escaping @Sendable () -> Void) -> (any CloudNewsWatch)? { nil }
}

/// A running ``CloudBackend/watchNews(_:)``.
public protocol CloudNewsWatch: Sendable {
    func stop()
}
