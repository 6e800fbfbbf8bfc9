import Foundation
import ShelfModel

public enum ItemMerge {
    /// The outcome of merging two concurrent edits of one item file against their common base.
    public enum Result: Equatable, Sendable { case merged(Data), conflict }

    /// `older` and `newer` are the two sides ordered by the time of their change (ties broken
    /// by the caller), so every device that merges the same pair computes the same bytes.
    public static func merge(base: Data, older: Data, newer: Data, kind: ItemKind) -> Result {
        if older == newer || older == base { return .merged(newer) }
        if newer == base { return .merged(older) }
        return .conflict
    }
}
