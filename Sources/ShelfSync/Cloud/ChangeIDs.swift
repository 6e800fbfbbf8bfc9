import ShelfModel

/// What a pushed change's id says: `DEVICE-BATCH-INDEX`, the batch that pushed it; a derived
/// merge's id joins the ids of its heads with `~`.
extension CloudChange {
    /// The batch that pushed change `id`; nil for a derived merge's id.
    static func pushedBatch(of id: ChangeID) -> (DeviceID, Int64)? {
        let parts = id.split(separator: "-", omittingEmptySubsequences: false)
        guard !id.contains("~"), parts.count >= 3, let number = Int64(parts[parts.count - 2]),
              Int(parts[parts.count - 1]) != nil else { return nil }
        return (parts.dropLast(2).joined(separator: "-"), number)
    }
}

extension ChangeBatch {
    /// The batches (device, number) that pushed the changes this batch's changes were based on
    /// (a derived merge's id names each of its heads).
    var batchesBelow: [(DeviceID, Int64)] {
        changes.compactMap(\.base).flatMap { $0.split(separator: "~") }.compactMap { CloudChange.pushedBatch(of: String($0)) }
    }
}
