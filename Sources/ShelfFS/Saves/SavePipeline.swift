import Foundation
import Glibc
import FuseKit
import Logging
import ShelfMarkdown
import ShelfModel
import ShelfStore

/// The one path every save takes: pending bytes → commit → item index, kernel caches, recent
/// saves.
///
/// Programs' writes to item files wait in ``ItemBuffers``, mirrored in the journal as they
/// arrive, and are committed by ``ItemCommitter`` when the ``SaveScheduler`` says so (a
/// writer's close, a pause in writing, a failed save's retry), on `fsync`, before a rename or
/// unlink moves the file, when a `shelf` command asks, and at unmount; a temp file renamed over
/// an item is committed here too. Every commit then updates the index, drops the kernel's pages
/// of the item's current file if the save came through a replaced one, and keeps the bytes for
/// the reads that follow. At start-up, what the journal kept of a mount that ended before
/// saving is committed first.
final class SavePipeline: Sendable {
    private let parts: MountParts
    let scheduler: SaveScheduler
    let recentSaves = RecentSaves()
    /// Large items read lately, whole (32 MiB at most).
    let recentReads = RecentSaves(capacity: 4 * TooLargeFiles.largestItemFile)
    /// What readers were served of each item, which a save may have been made from.
    let served: ServedVersions
    private let committer: ItemCommitter
    /// The unsaved bytes of item files, the pipeline's input.
    var buffers: ItemBuffers { parts.buffers }

    /// `parts.buffers`: over the library's journal, already replayed (``replayJournal(of:into:plain:logger:)``).
    init(_ parts: MountParts, served: ServedVersions, committer: ItemCommitter, idleSaveDelay: TimeInterval) {
        self.parts = parts
        self.served = served
        self.committer = committer
        scheduler = SaveScheduler(idleDelay: idleSaveDelay)
    }

    /// Opens the library's journal and commits what mounts that ended before saving left in it
    /// (a crash, a full disk at unmount): each entry into its item — back from the trash if it
    /// was deleted meanwhile, with a conflict copy if it changed since — or into a new item at
    /// its path (numbered if the path was taken); bytes too large for an item go beside it. An
    /// entry that cannot be committed, or whose replay ends the process, stays set aside in the
    /// journal (`shelf status` lists it) and the mount comes up. Called before the item index
    /// is loaded, so the index includes them.
    static func replayJournal(of store: LibraryStore, into committer: ItemCommitter, plain: PlainFileArea,
                              logger: Logger) throws -> SaveJournal {
        let journal = try SaveJournal(library: store.folder)
        for leftover in journal.leftovers() {
            do {
                let path: MountPath
                let target: ItemCommitter.Target
                switch leftover.target {
                case .item(let id, let base):
                    path = MountPath(try store.restore(id: id).path)
                    target = .existing(id, readFrom: base.map { [$0] } ?? [])
                case .newFile(let written):
                    let folder = MountPath(written).parent
                    let name = FileNaming.uniqued(MountPath(written).name) { candidate in
                        (try? store.record(atPath: folder.appending(candidate).rawValue)) != nil
                    }
                    path = folder.appending(name)
                    target = .new(at: path)
                }
                if leftover.size > TooLargeFiles.largestItemFile {
                    let aside = TooLargeFiles.name(beside: path, in: plain)
                    try FileManager.default.createDirectory(atPath: plain.realPath(path.parent), withIntermediateDirectories: true,
                                                            attributes: [.posixPermissions: 0o700])
                    guard rename(leftover.path, plain.realPath(aside)) == 0 else { throw Errno.current }
                    logger.warning("\(path) left in the journal is \(leftover.size) bytes, over the \(TooLargeFiles.largestItemFile) an item file may hold: its bytes are kept as \(aside)")
                } else {
                    _ = try committer.commit(try leftover.bytes(), at: path, into: target)
                    logger.notice("saved unsaved writes the last mount left in the journal (\(leftover.target))")
                }
                leftover.remove()
            } catch {
                leftover.setAside(because: "could not be saved: \(error)")
                logger.error("unsaved writes in the journal (\(leftover.target)) could not be saved: \(error); they are set aside in \(leftover.path) (see shelf status)")
            }
        }
        return journal
    }

    // MARK: Pending bytes

    /// Applies a program's write or resize to the bytes of the item inode `key` stands for, to
    /// be saved when the scheduler says so. Emptying a file (`O_TRUNC`) needs no read of the
    /// bytes it replaces, only their version.
    func apply(_ edit: BufferEdit, to inode: UInt64, key: NodeKey, by writer: ProcessID?) throws {
        try parts.buffers.apply(edit, to: inode, by: writer, start: {
            switch (key, edit) {
            case (.item(let id), .resize(0)): return ([], parts.index.summary(id: id)?.version)
            case (.item(let id), _):
                guard let file = try parts.store.file(id: id) else { throw Errno.noEntry }
                return (Array(file.content), file.version)
            default: return ([], nil)
            }
        }, target: { version in
            if case .item(let id) = key { return .item(id, baseVersion: version) }
            return .newFile(path: parts.names.path(of: key)?.rawValue ?? "")
        })
        // `key` is known: one lookup tells whether another file took the name meanwhile.
        if case .item = key, parts.inodes.existingInode(for: key) != inode { scheduler.wroteReplaced(inode) } else { scheduler.wrote(inode) }
    }

    /// A new item file at `path` (its inode `inode`): empty and unsaved from its creation, so
    /// that even an empty file becomes an item.
    func startNewFile(_ inode: UInt64, at path: MountPath) throws {
        try parts.buffers.startNewFile(inode, at: path.rawValue)
    }

    // MARK: Committing

    /// Starts saving in the background, on the scheduler's thread.
    func start() {
        scheduler.start { [weak self] inode in self?.saveInBackground(inode) }
    }

    /// Unmount: stops the background saves, then saves every file with unsaved writes. What
    /// cannot be saved stays in the journal, which the next mount replays and `shelf status`
    /// reports meanwhile.
    func stop() {
        scheduler.stop()
        for inode in parts.buffers.unsavedInodes() {
            do {
                try save(inode)
            } catch {
                parts.logger.error("could not save inode \(inode) at unmount; its writes stay in the journal for the next mount: \(error)")
            }
        }
    }

    var hasUnsavedWrites: Bool { parts.buffers.hasUnsavedWrites }

    /// How long a file a truncation emptied waits for the write that usually follows before a
    /// background save takes it as it is.
    static let truncationPause: TimeInterval = 0.5

    /// A save the scheduler started: nobody waits for it, so a failure is logged and retried
    /// (the writes stay in memory and in the journal meanwhile).
    private func saveInBackground(_ inode: UInt64) {
        // A close reported late can fall between the next save's truncation and its write:
        // saving the emptied file then would make a version nobody wrote.
        if parts.buffers.buffer(of: inode)?.isAwaitingWrite(within: Self.truncationPause) == true {
            scheduler.soon(inode, after: Self.truncationPause)
            return
        }
        do {
            try save(inode)
        } catch {
            parts.logger.error("could not save inode \(inode), trying again shortly: \(error)")
            scheduler.failed(inode)
        }
    }

    /// Commits every save whose writer has closed its file (a `shelf` command asks, through
    /// ``MountControl``): the close watcher first delivers the closes the kernel has queued.
    func commitClosedSaves() throws {
        if !parts.folders.deliverQueuedCloses() {
            parts.logger.warning("the close watcher did not report its queued closes in time; saves of just-closed files may follow later")
        }
        try scheduler.saveDueNow { try save($0) }
    }

    /// What `inode` stands for once its unsaved writes are committed: an item's attributes
    /// describe the save that `close()` just ended (read-your-writes), not the one before it.
    func keyWithWritesSaved(_ inode: UInt64) throws -> NodeKey? {
        if parts.buffers.holdsUnsavedWrites(inode) { try save(inode) }
        let key = parts.inodes.key(of: inode)
        if case .item(let id)? = key, parts.downloads.isLinked { try parts.downloads.fillPending([id]) }
        return key
    }

    /// Saves `inode`'s unsaved writes into whatever it stands for now: a valid text updates the
    /// item, an invalid one is kept as its draft; either way the record is committed on return.
    func save(_ inode: UInt64) throws {
        guard let buffer = parts.buffers.buffer(of: inode), buffer.isDirty else { return }
        if let replaced = buffer.takeReplaced() { try parts.view.keepShown(replaced) }
        let isNew = if case .newItemFile = parts.inodes.key(of: inode) { true } else { false }
        if isNew { parts.namespaceLock.lock() }
        defer { if isNew { parts.namespaceLock.unlock() } }
        // Named before the buffer's lock is taken, in case the bytes are too large for an item.
        let aside = parts.inodes.key(of: inode).flatMap(parts.names.path(of:)).map { TooLargeFiles.name(beside: $0, in: parts.plain) }
        let setAsideSize: Int?
        var committed: ItemCommitter.Outcome?
        do {
            setAsideSize = try buffer.saveIfDirty(largest: TooLargeFiles.largestItemFile, setAside: aside.map(parts.plain.realPath)) {
                let (saved, outcome) = try commit($0, into: inode)
                committed = outcome
                return saved
            }
        } catch let error as Errno {
            throw error
        } catch {
            parts.logger.error("could not save inode \(inode): \(error)")
            throw Errno.ioError
        }
        if let setAsideSize, let aside {
            try keptTooLarge(inode, as: aside, size: setAsideSize)
        } else if !parts.inodes.isKnownToKernel(inode) {
            // The kernel forgot the file while it held writes: nothing reads it any more.
            parts.buffers.releaseForgotten(inode)
            parts.inodes.dropForgotten(inode)
        } else if isCurrentFile(inode) {
            letGo(of: inode, savedAs: committed)
        }
    }

    /// Lets go of the bytes a save committed from the item's current file `inode`, which then
    /// reads the version the index gives — unless the item's content has moved on from them:
    /// the save was merged with a change made elsewhere (``ItemCommitter/Outcome/merged``), or
    /// sync applied one between the save's commit and now. The change follower may have
    /// recorded that version already while the bytes were unsaved (then it keeps nothing and
    /// tells the kernel nothing), so a reader would get it cut at the size the kernel holds, or
    /// mixed with the pages it keeps. The file keeps the saved bytes, and its name goes to
    /// another file, as the follower does for any change from elsewhere. Two saves of one file
    /// can end out of order: when the file holds a later save's bytes by now, that save decides.
    private func letGo(of inode: UInt64, savedAs outcome: ItemCommitter.Outcome?) {
        guard let outcome, let movedOn = outcome.merged ?? contentMovedOn(from: outcome.record) else {
            parts.buffers.releaseIfSaved(inode)
            return
        }
        if parts.buffers.keepHeld(inode, ifSaved: outcome.record.version) == true {
            parts.view.giveAnotherFile(to: movedOn.item.id, at: MountPath(movedOn.path), insteadOf: inode)
        }
    }

    /// The item's current record, when the index has moved past the version `saved` and the
    /// content with it; nil while the file would read the saved bytes (this mount's own renames
    /// and mode changes move the version, not the content).
    private func contentMovedOn(from saved: ItemRecord) -> ItemRecord? {
        guard let shown = parts.index.summary(id: saved.item.id), shown.version > saved.version,
              let current = try? parts.store.record(id: saved.item.id), current.content != saved.content else { return nil }
        return current
    }

    /// `inode`'s bytes were too large for an item and are now the plain file `aside`: the item
    /// file shows the item's last good save again (a new file, empty: saved so next, in the
    /// background, as this save may hold the namespace lock), and the kernel learns of both.
    private func keptTooLarge(_ inode: UInt64, as aside: MountPath, size: Int) throws {
        parts.buffers.releaseIfSaved(inode)
        parts.logger.warning("a save of \(size) bytes is over the \(TooLargeFiles.largestItemFile) an item file may hold: the bytes are kept as the plain file \(aside), and the item file shows its last good save")
        parts.kernel.invalidate(.content(Inode(inode)))
        parts.kernel.nameAppeared(aside.name, in: parts.inodes.kernelInode(for: .plain(aside.parent)))
        if case .newItemFile(let pending) = parts.inodes.key(of: inode), let path = parts.newItemFiles.path(of: pending) {
            try parts.buffers.startNewFile(inode, at: path.rawValue)
            scheduler.closed(inode)
        }
    }

    /// A plain file renamed over item `id` (an atomic save): its bytes are `inode`'s (the
    /// renamed file's, which is the item's file from now on) unsaved bytes, saved at once in the
    /// background like a writer's close, so the rename does not wait for the commit. Reads,
    /// `stat`, attribute reads and `shelf` commands see the save as for any unsaved writes.
    /// The file moves into the journal; returns false when it stayed where it was.
    func adoptRenamed(_ bytes: [UInt8], from file: String, as inode: UInt64, into id: ItemID, by renamer: ProcessID?,
                      carrying metadata: ItemCommitter.FileMetadata) throws -> Bool {
        let moved = try parts.buffers.adopt(bytes, from: file, as: inode, by: renamer, target: .item(id, baseVersion: nil),
                                      carrying: metadata, replacing: parts.inodes.kernelInode(for: .item(id)))
        parts.inodes.rekey(inode, to: .item(id))  // before the scheduler's thread can save it
        scheduler.closed(inode)
        return moved
    }

    /// Commits a plain file's bytes renamed onto an item path by `renamer` (an item coming
    /// back, a new item), with the file's times, mode and attributes.
    /// `inode`: the renamed file's, which is the item's file from now on.
    func commitRenamed(_ bytes: [UInt8], at path: MountPath, into target: ItemCommitter.Target, by renamer: ProcessID?,
                       carrying metadata: ItemCommitter.FileMetadata, as inode: UInt64?) throws -> ItemCommitter.Outcome {
        let outcome = try committer.commit(bytes, at: path, into: target, modified: metadata.modified, carrying: metadata)
        noteSaved(outcome.record, by: [renamer])
        return outcome
    }

    /// Commits `unsaved` into what `inode` stands for: an item's save merges with what changed
    /// elsewhere since its writer read it (``ServedVersions``).
    /// Returns what the buffer learns, and what the save became (nil: no item's save).
    private func commit(_ unsaved: ItemBuffer.Unsaved, into inode: UInt64) throws -> (ItemBuffer.Saved, ItemCommitter.Outcome?) {
        switch parts.inodes.key(of: inode) {
        case .item(let id):
            let path = try parts.names.path(of: .item(id)) ?? restoreForWrites(id)
            let readFrom = served.readFrom(id, by: unsaved.writers, startedFrom: unsaved.baseVersion)
            parts.logger.debug("saving \(path) from one of versions \(readFrom)")
            let outcome = try committer.commit(unsaved.bytes, at: path, into: .existing(id, readFrom: readFrom),
                                               modified: unsaved.modified, carrying: unsaved.carried)
            return (saved(outcome, by: inode, writers: unsaved.writers), outcome)
        case .newItemFile(let pending):
            guard let path = parts.newItemFiles.path(of: pending) else {
                parts.logger.debug("inode \(inode) was removed before its first save; its writes are dropped")
                return (ItemBuffer.Saved(version: 0, nextTarget: nil), nil)
            }
            var outcome = try committer.commit(unsaved.bytes, at: path, into: .new(at: path), modified: unsaved.modified)
            // The mode it was created with (`open(O_CREAT, 0600)`), and its creator.
            if let creation = parts.newItemFiles.creation(of: pending),
               creation.permissions != outcome.record.permissions || creation.owner != nil {
                let id = outcome.record.item.id
                outcome.record = try parts.store.write { writer in
                    if let owner = creation.owner { try writer.setOwner(owner, of: id) }
                    return try writer.setFileTimes(id: id, modified: nil, permissions: creation.permissions)
                }
                if let owner = creation.owner { parts.owners.set(owner, of: id) }
            }
            // The name goes from the pending file to the item without a moment of finding
            // nothing or another inode: the inode takes the item's key (keeping the pending
            // one), the index learns of the item, and only then does the pending file go.
            parts.inodes.becameItem(inode, outcome.record.item.id)
            parts.view.recorded(outcome.record)
            parts.newItemFiles.remove(pending)
            parts.inodes.newFileEntryGone(inode)
            return (saved(outcome, by: inode, writers: unsaved.writers), outcome)
        case .plain(let path):
            // Renamed to a plain name just as it was written: the writes follow it there.
            try parts.plain.writeAtomically(unsaved.bytes, to: path)
            if let carried = unsaved.carried { try parts.plain.apply(carried, to: path) }
            return (ItemBuffer.Saved(version: unsaved.baseVersion ?? 0, nextTarget: nil), nil)
        case .status, nil:
            throw Errno.badHandle
        }
    }

    /// An item deleted (here or elsewhere) while a program still wrote its file comes back from
    /// the trash with those writes: nothing written is lost. Returns its path.
    private func restoreForWrites(_ id: ItemID) throws -> MountPath {
        let record = try parts.store.restore(id: id)
        parts.logger.notice("\(record.path) was deleted while a program still wrote it; it is back with those writes")
        let path = MountPath(record.path)
        try parts.folders.ensure(path.parent)
        parts.view.restored(record)
        return path
    }

    /// Whether `inode` is what its item's (or plain file's) name shows now, rather than a file
    /// replaced by a rename that some program still reads.
    private func isCurrentFile(_ inode: UInt64) -> Bool {
        guard let key = parts.inodes.key(of: inode) else { return false }
        return parts.inodes.existingInode(for: key) == inode
    }

    /// Records a save of `writers`' bytes made through `inode`, and drops the kernel's pages of
    /// the item's current file when the save came through a replaced one. Writes that came
    /// after the saved bytes are saved on top of them.
    private func saved(_ outcome: ItemCommitter.Outcome, by inode: UInt64, writers: Set<ProcessID?>) -> ItemBuffer.Saved {
        let id = outcome.record.item.id
        // Saved through a file replaced meanwhile: the item's current file is kept at what it
        // shows, and the save reaches its name as another file (as a change from elsewhere does).
        let current = parts.inodes.existingInode(for: .item(id)).flatMap { $0 == inode ? nil : $0 }
        var keptCurrent = false
        if let current, let shown = parts.index.version(of: id) {
            do {
                keptCurrent = try parts.view.keepShown(current, version: shown)
            } catch {
                parts.logger.error("could not keep the bytes inode \(current) shows: \(error)")
            }
        }
        noteSaved(outcome.record, by: writers)
        if let aside = outcome.keptAside {
            parts.logger.notice("\(outcome.record.path) was saved from version \(aside.readFrom), and changed elsewhere meanwhile (version \(aside.changedTo)) in the same lines: the save wins, and the other side is kept as \(aside.copy)")
        }
        if keptCurrent, let current {
            parts.view.giveAnotherFile(to: id, at: MountPath(outcome.record.path), insteadOf: current)
        } else if let current {
            parts.kernel.invalidate(.content(Inode(current)))
        }
        return ItemBuffer.Saved(version: outcome.record.version, nextTarget: .item(id, baseVersion: outcome.record.version))
    }

    /// The index learns the version holding a save's bytes (so the change follower knows it
    /// needs no invalidation), and the bytes are kept for the reads that follow. A merge on
    /// top of them reaches the index through the follower, like any change from elsewhere, which
    /// tells watchers the file changed; the file that showed the saved bytes keeps them, and the
    /// name goes to another file (``letGo(of:savedAs:)``).
    func noteSaved(_ record: ItemRecord, by writers: Set<ProcessID?>) {
        parts.view.recorded(record)
        recentSaves.keep(record.item.id, version: record.version, content: record.content)
        served.saved(record.item.id, version: record.version, by: writers, startsAgain: !record.content.isEmpty)
    }
}
