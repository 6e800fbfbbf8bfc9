import ShelfModel

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
