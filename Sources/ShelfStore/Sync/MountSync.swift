import Foundation
import ShelfModel

// What a mount and the sync engine of its library say to each other, defined below both so
// that neither imports the other: the mount command builds the engine and hands the mount
// ``MountSync``; the mount hands the engine itself as a ``SyncedMount``.

/// What a mount asks of the sync engine of a library linked to a cloud.
public protocol MountSync: SaveConflicts {
    /// The bytes of placeholder `id` from the cloud, checked; nil when it is no placeholder.
    func fetch(_ id: ItemID) throws -> FetchedContent?
    /// Puts fetched bytes in place in one transaction; the records they completed.
    func fill(_ fetched: [FetchedContent]) throws -> [ItemRecord]
    /// What `/.shelf/sync.json` shows.
    func statusJSON() throws -> Data
    /// Runs a round now (`shelf cloud sync` asks a running mount), and says what it moved.
    func syncRound() throws -> String
    /// Asks `mount` before each change it applies, and tells it of plain files changed elsewhere.
    func serve(_ mount: any SyncedMount)
}

/// What the sync engine asks of a mount of its library.
public protocol SyncedMount: Sendable {
    /// The items programs hold now: their changes from the cloud wait, and they are never evicted.
    func busyItems() -> ItemsInUse
    /// Puts the bytes fetched for readers in place, so a round's changes land on them.
    func fillFetchedBytes() throws
    /// When each item was last read here: the cache budget evicts the others first.
    func readTimes() -> [ItemID: Date]
    /// Another device changed the plain file (or folder) at `path`, which was there before on
    /// this device's disk or not: watchers hear of a change or of a new file.
    func plainFileChangedElsewhere(_ path: String, wasThere: Bool)
}

/// The items programs hold now (a lock on the file, unsaved writes in it), as a mount sees
/// them — or every item, with the reason, when it cannot tell (the kernel's lock table could
/// not be read). Sync fails closed: a change from the cloud never goes over a file that might
/// be locked; it waits, and `shelf cloud status` says why.
public struct ItemsInUse: Sendable {
    public var items: Set<ItemID>
    /// Why every item counts as held; nil when `items` is the whole answer.
    public var everyItemBecause: String?

    public init(_ items: Set<ItemID>, everyItemBecause: String? = nil) {
        self.items = items
        self.everyItemBecause = everyItemBecause
    }

    public func contains(_ id: ItemID) -> Bool { everyItemBecause != nil || items.contains(id) }
}

/// A placeholder's bytes fetched from the cloud and checked, on their way into the store.
public struct FetchedContent: Sendable {
    public let id: ItemID
    /// The hash the item's download state named: bytes for a state that has been replaced
    /// meanwhile are dropped at the fill.
    public let hash: String
    public let bytes: Data

    public init(id: ItemID, hash: String, bytes: Data) {
        self.id = id
        self.hash = hash
        self.bytes = bytes
    }
}

/// How a conflict copy of an item's current state is made (``SaveConflicts/asideCopy(ofCurrentStateOf:with:)``):
/// for a change from the cloud, the same on every device.
public struct AsideCopy: Sendable {
    public let id: ItemID
    /// The losing side's time and device name, which the copy's name shows.
    public let time: Date
    public let device: String
    /// Part of the id in the name, so two copies from one device and second differ; nil for
    /// bytes only this device has.
    public let tag: String?

    public init(id: ItemID, time: Date, device: String, tag: String?) {
        self.id = id
        self.time = time
        self.device = device
        self.tag = tag
    }
}

/// What a save through the mount asks of sync when it meets a change from elsewhere, answered
/// from the store inside the save's transaction (the sync engine answers).
public protocol SaveConflicts: Sendable {
    /// The copy a save that beats item `id`'s current state keeps that state aside as.
    func asideCopy(ofCurrentStateOf id: ItemID, with writer: StoreWriter) throws -> AsideCopy?
    /// A save of item `id` made from its `version` won over a newer state it did not see, now aside.
    func saveWon(_ id: ItemID, madeFrom version: Int64, with writer: StoreWriter) throws
}
