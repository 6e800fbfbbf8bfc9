import Foundation
import ShelfModel
import ShelfMarkdown
import ShelfStore

/// Turns the bytes of a saved item file into a store write: the one place that decides which
/// item a save belongs to and whether it is a valid record or a draft.
///
/// Every save succeeds as far as the editor is concerned, and the file shows exactly the bytes
/// written from then on: a text that parses updates the record and is kept as its source, one
/// that does not (broken YAML, bytes that are not UTF-8) is kept verbatim as a draft while the
/// record stays at its last good state. Shelf writes into a file's bytes only when it renders
/// the file itself, for changes made elsewhere.
struct ItemCommitter: Sendable {
    let store: LibraryStore
    /// Names conflict copies (`Title (conflict … device).md`).
    let device: String
    /// Sync's word on a save that meets a change from elsewhere: how the other side is kept
    /// aside, and what the save's push is based on (nil: not linked).
    let conflicts: (any SaveConflicts)?
    /// Items deleted through the mount a moment ago: a new file at such a path is that item.
    let recentUnlinks: RecentUnlinks?

    init(store: LibraryStore, device: String = ProcessInfo.processInfo.hostName, conflicts: (any SaveConflicts)? = nil,
         recentUnlinks: RecentUnlinks? = nil) {
        self.store = store
        self.device = device
        self.conflicts = conflicts
        self.recentUnlinks = recentUnlinks
    }

    /// Where a save goes.
    enum Target: Equatable {
        /// The item at the saved path: its identity is the path's, whatever `id:` the text
        /// claims. `readFrom`: the versions the saved bytes may have been made from (the one a
        /// writer's buffer started from, those the mount served to readers), in the order a
        /// tie between them goes; empty: they are the newest word on whatever the item is now.
        case existing(ItemID, readFrom: [Int64])
        /// No item is at the path yet: the text's `id:` decides (a trashed id brings that item
        /// back; the id of a live item elsewhere is a copy's, so this is a new item); without one,
        /// an item deleted from this path a moment ago comes back (``RecentUnlinks``), else it is
        /// a new item. The id of a new item lives in the store and `user.shelf.id`, not in
        /// bytes nobody wrote.
        case new(at: MountPath)
    }

    /// What a save became.
    struct Outcome {
        /// The record holding exactly the saved bytes.
        var record: ItemRecord
        /// The item after the save was merged with a change made elsewhere since its bytes were
        /// read (a version on top of `record`): what the file shows now. Nil when it shows the
        /// saved bytes.
        var merged: ItemRecord?
        /// For a save into an existing item: the bytes and version its file showed until now.
        var replaced: (version: Int64, content: Data)?
        /// What a save whose changes overlap a change made elsewhere since it was read kept aside.
        var keptAside: KeptAside?
    }

    /// The other side of a save that could not merge, kept as a conflict copy.
    struct KeptAside {
        var copy: String
        /// The version the saved bytes were read from, and the one the item had changed to.
        var readFrom: Int64
        var changedTo: Int64
    }

    /// What a file brings besides its bytes when it is renamed over an item (rsync and `cp -p`
    /// set them on a temp file first): they become the item's, as the inode's would on disk.
    struct FileMetadata: Equatable {
        var modified: Date
        var permissions: UInt32
        /// `user.*` extended attributes, `user.shelf.*` excluded (those describe the record).
        var attributes: [String: Data]
    }

    /// Saves `bytes` written at `path` into `target`; `modified` is when they were written.
    /// `metadata`: the times, mode and attributes the item's file takes on, whether or not its
    /// bytes changed.
    func commit(_ bytes: [UInt8], at path: MountPath, into target: Target, modified: Date = Date(),
                carrying metadata: FileMetadata? = nil) throws -> Outcome {
        guard let kind = PathRules.itemKind(under: path) else {
            throw StoreError.invalidPath(path.rawValue, reason: "item files live under Books/ or Notes/")
        }
        let source = Data(bytes)
        return try store.write { writer -> Outcome in
            var outcome: Outcome
            switch target {
            case .existing(let id, let readFrom):
                let replaced = try writer.file(id: id)
                outcome = try save(source, of: id, kind: kind, at: path, replacing: replaced, readFrom: readFrom,
                                   modified: modified, with: writer)
                outcome.replaced = replaced
            case .new(let path):
                outcome = Outcome(record: try writer.saveFile(source, of: try newItemID(for: source, kind: kind, at: path,
                                                                                        with: writer),
                                                              kind: kind, at: path.rawValue, basedOn: nil, modified: modified))
            }
            guard let metadata else { return outcome }
            try writer.replaceExtendedAttributes(id: outcome.record.item.id, with: metadata.attributes)
            let timed = try writer.setFileTimes(of: outcome.merged ?? outcome.record, modified: metadata.modified,
                                                permissions: metadata.permissions)
            if outcome.merged == nil { outcome.record = timed } else { outcome.merged = timed }
            return outcome
        }
    }

    /// The id a new file's item gets at `path`: the one its text declares when that names no
    /// live item (a trashed id brings that item back); a fresh one when it names a live item
    /// elsewhere (a copy: `cp a.md b.md`); for a text without `id:` (or one that does not parse),
    /// the item deleted from `path` a moment ago if it is still gone, else a fresh one.
    private func newItemID(for source: Data, kind: ItemKind, at path: MountPath, with writer: StoreWriter) throws -> ItemID {
        if case .success(let parsed) = MarkdownCodec.parse(bytes: source, kind: kind, fileTitle: nil), parsed.declaredID {
            return try writer.record(id: parsed.item.id) == nil ? parsed.item.id : .generate()
        }
        // Same path, so same kind: `Books/` and `Notes/` never share a path.
        if let deleted = recentUnlinks?.item(deletedAt: path), try writer.record(id: deleted) == nil {
            return deleted
        }
        return .generate()
    }

    /// A save on top of what the item is now. When the item changed elsewhere (sync, the CLI)
    /// after the writer read it, the save merges three-way, with the rules sync uses: base, the
    /// version the bytes were read from; ours, the saved bytes; theirs, the item now. The saved
    /// bytes are kept as a version, and the merge goes on top of them. What cannot merge: the
    /// save wins (it is the newest word) and the other side is kept verbatim, a pending draft
    /// included, as `Title (conflict YYYY-MM-DD HHMMSS device).md` — never silently overwritten.
    /// `current`: what the item's file shows now (nil: nothing yet).
    private func save(_ source: Data, of id: ItemID, kind: ItemKind, at path: MountPath,
                      replacing current: (version: Int64, content: Data)?, readFrom: [Int64],
                      modified: Date, with writer: StoreWriter) throws -> Outcome {
        let saveOnTop = { try writer.saveFile(source, of: id, kind: kind, at: path.rawValue, basedOn: nil, modified: modified) }
        guard let current else { return Outcome(record: try saveOnTop()) }
        let base = try readBase(of: source, id: id, current: current, among: readFrom, with: writer)
        guard let base else { return Outcome(record: try saveOnTop()) }
        let merge = base.bytes.map { ItemMerge.merge(base: $0, older: current.content, newer: source, kind: kind) } ?? .conflict
        // A save that shows its own bytes (merged as they are, or winning a conflict) continues
        // the line it was read from: a copy that kept those bytes aside when they lost is
        // retired, so successive saves leave one copy.
        var showsSavedBytes = true
        if case .merged(let merged) = merge { showsSavedBytes = merged == source }
        if showsSavedBytes, let bytes = base.bytes { try writer.retireConflictCopies(holding: bytes, beside: path.rawValue) }
        switch merge {
        case .merged(let merged) where merged == source:
            return Outcome(record: try saveOnTop())
        case .merged(let merged):
            let saved = try saveOnTop()
            let result = try writer.with(ChangeOrigin(.merge)) {
                try writer.saveFile(merged, of: id, kind: kind, at: path.rawValue, basedOn: saved.version, modified: Date())
            }
            return Outcome(record: saved, merged: result)
        case .conflict:
            // What the current state is, asked before the save replaces it.
            let aside = try conflicts?.asideCopy(ofCurrentStateOf: id, with: writer)
            var outcome = Outcome(record: try saveOnTop())
            try conflicts?.saveWon(id, madeFrom: base.version, with: writer)
            if let other = try writer.record(id: id) {
                let copyPath = try aside.flatMap { try writer.storedFile(id: $0.id).flatMap { $0.isTrashed ? nil : $0.path } }
                    ?? writer.saveConflictCopy(current.content, id: aside?.id ?? .generate(), kind: kind, beside: other.path,
                                               time: aside?.time ?? Date(), device: aside?.device ?? device, tag: aside?.tag).path
                outcome.keptAside = .init(copy: copyPath, readFrom: base.version, changedTo: current.version)
            }
            return outcome
        }
    }

    /// The version a save's bytes were read from, when it is an earlier one than the item's
    /// current version; `bytes` nil when the history no longer keeps them.
    private struct ReadBase {
        var version: Int64
        var bytes: Data?
    }

    /// Of the versions `source` may have been read from, the one it differs least from; nil
    /// when that is the current version. A tie goes to the one `readFrom` names first (see
    /// ``ServedVersions/readFrom(_:startedFrom:)``). A version older than the history
    /// keeps counts as the farthest; one missing inside it was a placeholder's (its bytes were
    /// never stored, and a fill made the next version of them) and is passed over.
    private func readBase(of source: Data, id: ItemID, current: (version: Int64, content: Data), among readFrom: [Int64],
                          with writer: StoreWriter) throws -> ReadBase? {
        var candidates: [Int64] = []
        for version in readFrom where !candidates.contains(version) { candidates.append(version) }
        guard candidates.contains(where: { $0 != current.version }) else { return nil }
        // No version kept at all: every earlier one was a placeholder's, none was dropped.
        let oldestKept = try writer.oldestKeptVersion(of: id) ?? .min
        var best: (base: ReadBase, distance: Int)?
        for version in candidates {
            let bytes = version == current.version ? current.content : try writer.file(id: id, version: version)
            guard bytes != nil || version < oldestKept else { continue }
            let distance = bytes.flatMap { ItemMerge.changedLines(from: $0, to: source) } ?? .max
            if best == nil || distance < best!.distance { best = (ReadBase(version: version, bytes: bytes), distance) }
        }
        guard let best, best.base.version != current.version else { return nil }
        return best.base
    }
}
