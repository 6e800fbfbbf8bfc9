import Synchronization
import ShelfModel

/// Which versions of each item the mount has shown, for the question a change from elsewhere
/// raises while programs hold the old bytes: which version a save was made from. A save is
/// merged against the version its bytes came from (``ItemCommitter``), so a program that read
/// a file before a change from elsewhere arrived does not undo that change by writing back what
/// it read. The best answer is the version the writing process itself last read (an editor
/// reads, then writes), kept per process. A writer the mount never served (it read pages the
/// kernel kept, or wrote without reading) may have read any version handed to readers since
/// this mount last saved the item: the kernel can only hold pages of bytes the mount served.
final class ServedVersions: Sendable {
    /// How many versions are remembered per item; older ones are unlikely bases and, if one is,
    /// the save keeps the other side as a conflict copy instead of merging.
    private static let kept = 4
    /// How many items' readers are remembered; past it the oldest half is dropped and those
    /// saves fall back to every served version.
    private static let rememberedReads = 16_384
    private struct State {
        var servedByItem: [ItemID: [Int64]] = [:]
        /// The versions each process read of an item since it last wrote it, most recent last
        /// (by thread group: editors read and write from different threads); items in the
        /// order they were first read.
        var readByProcess: [ItemID: [ProcessID: [Int64]]] = [:]
        var readOrder: [ItemID] = []
        /// The version each placeholder's fill made, by the placeholder's: a read served the
        /// fetched bytes as the placeholder's version may be noted after the fill.
        var fills: [ItemID: (placeholder: Int64, fill: Int64)] = [:]
    }
    private let state = Mutex(State())

    /// A read of item `id` by `reader` (nil: not known) was answered with the bytes of `version`.
    func served(_ id: ItemID, version: Int64, to reader: ProcessID? = nil) {
        state.withLock { state in
            let version = state.fills[id].flatMap { $0.placeholder == version ? $0.fill : nil } ?? version
            if let reader { Self.note(reader, read: version, of: id, in: &state) }
            guard state.servedByItem[id]?.last != version else { return }
            Self.append(version, to: &state.servedByItem[id, default: []])
        }
    }

    /// A placeholder of item `id` was filled, making `version` of the bytes its readers were
    /// served while it downloaded (the placeholder's own version, one before, holds none).
    func filled(_ id: ItemID, version: Int64) {
        state.withLock { state in
            func replacingPlaceholder(_ versions: [Int64]) -> [Int64] {
                var replaced: [Int64] = []
                for served in versions { Self.append(served == version - 1 ? version : served, to: &replaced) }
                return replaced
            }
            var served = replacingPlaceholder(state.servedByItem[id] ?? [])
            Self.append(version, to: &served)
            state.servedByItem[id] = served
            state.readByProcess[id] = state.readByProcess[id]?.mapValues(replacingPlaceholder)
            state.fills[id] = (version - 1, version)
        }
    }

    /// The versions a save of item `id` by `writers` (nil inside: a writer not known; they wrote
    /// the bytes, or renamed a file over it) may have been made from, in the order a tie between
    /// them goes (``ItemCommitter``). With one writer known: what it read since it last wrote,
    /// most recent first — a writer that read a newer version after its own save most likely
    /// reloaded — then any served to others after (it may have read them from the kernel's
    /// pages). Otherwise every served version and `startedFrom` (what the writes landed on),
    /// oldest first: a save then keeps a change it may not have seen as a copy rather than
    /// overwrite it.
    func readFrom(_ id: ItemID, by writers: Set<ProcessID?>, startedFrom: Int64? = nil) -> [Int64] {
        state.withLock { state in
            let served = state.servedByItem[id] ?? []
            guard writers.count == 1, let writer = writers.first ?? nil,
                  let reads = state.readByProcess[id]?[writer], let last = reads.last else {
                return Array(Set(served + [startedFrom].compactMap { $0 })).sorted()
            }
            let servedLater = served.firstIndex(of: last).map { Array(served[served.index(after: $0)...]) } ?? []
            return reads.reversed() + [startedFrom].compactMap { $0 } + servedLater
        }
    }

    /// This mount saved `writers`' bytes as item `id`'s `version`. `startsAgain`: from now on
    /// its writers start from there; an emptied file is more likely the middle of an editor's
    /// save, whose bytes come from what was read. Its writers hold the saved bytes from now on.
    func saved(_ id: ItemID, version: Int64, by writers: Set<ProcessID?>, startsAgain: Bool) {
        if !startsAgain { served(id, version: version) }
        state.withLock { state in
            if startsAgain { state.servedByItem[id] = [version] }
            state.fills[id] = nil
            for case let writer? in writers {
                state.readByProcess[id]?[writer] = nil
                Self.note(writer, read: version, of: id, in: &state)
            }
        }
    }

    private static func note(_ reader: ProcessID, read version: Int64, of id: ItemID, in state: inout State) {
        if state.readByProcess[id] == nil {
            state.readOrder.append(id)
            if state.readOrder.count > rememberedReads {
                let dropped = state.readOrder.prefix(rememberedReads / 2)
                for item in dropped { state.readByProcess[item] = nil }
                state.readOrder.removeFirst(dropped.count)
            }
        }
        append(version, to: &state.readByProcess[id, default: [:]][reader, default: []])
    }

    /// Puts `version` last in `versions`, keeping each once and only the newest few.
    private static func append(_ version: Int64, to versions: inout [Int64]) {
        versions.removeAll { $0 == version }
        versions.append(version)
        if versions.count > kept { versions.removeFirst(versions.count - kept) }
    }
}
