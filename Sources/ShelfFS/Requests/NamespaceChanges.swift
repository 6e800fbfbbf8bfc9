import Foundation
import Glibc
import FuseKit
import Logging
import ShelfModel
import ShelfStore

/// Creating, removing and renaming names: where editors' save dances (vim's `x → x~`,
/// JetBrains' `___jb_tmp___`, `sed -i`, atomic replace) turn back into one item keeping its
/// identity. The README's table of save patterns ("The mount") is the contract; `rename`
/// implements it row by row.
///
/// Every change holds `namespaceLock` (see the lock order in ``ShelfFileSystem``); a file that
/// moves is saved before the lock is taken.
struct NamespaceChanges: Sendable {
    let parts: MountParts
    let attributes: NodeAttributes
    let editor: AttributeEditor
    let saves: SavePipeline

    private func mutating<T>(_ body: () throws -> T) throws -> T {
        parts.namespaceLock.lock()
        defer {
            parts.folders.noteNamespaceChange()
            parts.namespaceLock.unlock()
        }
        return try body()
    }

    /// The path `name` would have in folder `parent`, refusing the read-only status folder.
    private func writablePath(parent: UInt64, name: String) throws -> MountPath {
        guard name.utf8.count <= ShelfFileSystem.nameMax else { throw Errno.nameTooLong }
        let path = try parts.names.folderPath(parent).appending(name)
        guard !PathRules.isStatusPath(path) else { throw Errno.accessDenied }
        return path
    }

    // MARK: Creating

    /// `open(O_CREAT)` of a name the kernel did not know. The file's later reads and writes
    /// arrive by inode, like every other file's; its writer's close is seen by the close watcher
    /// (once opens are stateless the kernel sends no `release` for created files either).
    /// `creator`: another user creating the file through a mount others may use, whose file it
    /// becomes (as on a disk filesystem); nil: the mount owner's.
    func create(parent: UInt64, name: String, mode: UInt32, flags: OpenFlags, creator: FileOwner? = nil) throws -> CreatedFile {
        try mutating {
            let path = try writablePath(parent: parent, name: name)
            if let existing = parts.names.resolve(path) {
                guard !flags.exclusive else { throw Errno.exists }
                let inode = parts.inodes.inode(for: existing)
                if flags.truncates && flags.isWritable {
                    _ = try editor.setAttributes(inode, changes: AttributeChanges(size: 0))
                }
                return CreatedFile(entry: try attributes.entry(for: existing), file: OpenedFile())
            }
            if PathRules.isItemPath(path) {
                // Not an item until its first save decides which one (its `id:` may name a
                // trashed item coming back).
                let pending = parts.newItemFiles.add(at: path, .init(permissions: mode & 0o7777, owner: creator))
                try saves.startNewFile(parts.inodes.inode(for: .newItemFile(pending)), at: path)
                return CreatedFile(entry: try attributes.entry(for: .newItemFile(pending)), file: OpenedFile())
            }
            let descriptor = try PlainDescriptors.create(path, in: parts.plain, exclusive: flags.exclusive, mode: mode & 0o7777)
            // The mode the kernel sent has the creator's umask applied already; this process's
            // own umask must not take more bits away.
            try descriptor.apply(AttributeChanges(permissions: mode & 0o7777, uid: creator?.uid, gid: creator?.gid))
            let entry = try attributes.entry(for: .plain(path))
            parts.descriptors.keep(descriptor, for: entry.attributes.inode.rawValue)
            return CreatedFile(entry: entry, file: OpenedFile())
        }
    }

    func makeNode(parent: UInt64, name: String, mode: UInt32, device: UInt64, creator: FileOwner? = nil) throws -> Entry {
        try mutating {
            let path = try writablePath(parent: parent, name: name)
            try refuseItemName(path)
            try parts.plain.makeNode(path, mode: mode_t(mode), device: dev_t(device))
            try parts.plain.changeMode(path, to: mode_t(mode & 0o7777))
            if let creator { try parts.plain.changeOwner(path, uid: creator.uid, gid: creator.gid) }
            return try attributes.entry(for: .plain(path))
        }
    }

    func makeDirectory(parent: UInt64, name: String, mode: UInt32, creator: FileOwner? = nil) throws -> Entry {
        try mutating {
            let path = try writablePath(parent: parent, name: name)
            try refuseItemName(path)
            try parts.plain.makeDirectory(path, mode: mode_t(mode & 0o7777))
            // As for files: the umask was the creator's; a set-group-ID parent's bit is kept.
            try parts.plain.changeMode(path, to: mode_t(mode & 0o7777) | (try parts.plain.status(path).st_mode & S_ISGID))
            if let creator { try parts.plain.changeOwner(path, uid: creator.uid, gid: creator.gid) }
            parts.folders.watchForCloses(path)
            return try attributes.entry(for: .plain(path))
        }
    }

    func makeSymlink(parent: UInt64, name: String, target: String, creator: FileOwner? = nil) throws -> Entry {
        try mutating {
            let path = try writablePath(parent: parent, name: name)
            try refuseItemName(path)
            try parts.plain.symlink(path, target: target)
            if let creator { try parts.plain.changeOwner(path, uid: creator.uid, gid: creator.gid) }
            return try attributes.entry(for: .plain(path))
        }
    }

    /// Only item files take `*.md` names in item folders: a folder, symlink or device node
    /// there would be hidden behind the item overlay (`EPERM`), unless the name is taken (`EEXIST`).
    private func refuseItemName(_ path: MountPath) throws {
        guard PathRules.isItemPath(path) else { return }
        throw parts.names.resolve(path) != nil ? Errno.exists : Errno.notPermitted
    }

    // MARK: Removing

    /// `rm` of an item sends it to the store's trash (`shelf trash restore` brings it back),
    /// with any writes made to it until then; a file created at its path a moment later is
    /// that item again (``RecentUnlinks``).
    func unlink(parent: UInt64, name: String) throws {
        try saveBeforeMoving(parent: parent, name: name)
        try mutating {
            let path = try writablePath(parent: parent, name: name)
            switch parts.names.resolve(path) {
            case .item(let id):
                try parts.store.write { try $0.trash(id: id) }
                parts.view.removed(id)
                parts.recentUnlinks.deleted(id, at: path)
            case .newItemFile(let pending):
                parts.newItemFiles.remove(pending)
            case .plain:
                keepOpenWhileKnown(path)
                try parts.plain.unlink(path)
                parts.inodes.detach(.plain(path))
            case .status:
                throw Errno.accessDenied
            case nil:
                throw Errno.noEntry
            }
        }
    }

    func removeDirectory(parent: UInt64, name: String) throws {
        try mutating {
            let path = try writablePath(parent: parent, name: name)
            guard ItemKind(folderName: path.rawValue) == nil else {
                throw Errno.busy  // Books/ and Notes/ always exist
            }
            guard !holdsItems(path) else { throw Errno.notEmpty }
            try parts.plain.removeDirectory(path)
            parts.inodes.detach(.plain(path))
        }
    }

    /// Before plain file `path` loses its last name the mount knows: programs may hold it open,
    /// so its file stays open (and readable, writable) until the kernel forgets its inode.
    private func keepOpenWhileKnown(_ path: MountPath) {
        guard let inode = parts.inodes.kernelInode(for: .plain(path)), !parts.inodes.hasOtherName(inode, than: path) else { return }
        parts.descriptors.pin(inode, path: path, in: parts.plain)
    }

    /// `link`: another name for a plain file (a hard link). Items have exactly one path each:
    /// `EPERM`, as on filesystems without hard links, so `cp -al` and `rsync -H` copy them.
    func link(_ inode: UInt64, newParent: UInt64, newName: String) throws -> Entry {
        try mutating {
            let to = try writablePath(parent: newParent, name: newName)
            guard case .plain(let from) = parts.inodes.key(of: inode), parts.descriptors.unlinked(inode) == nil,
                  !PathRules.isItemPath(to) else { throw Errno.notPermitted }
            guard parts.names.resolve(to) == nil else { throw Errno.exists }
            try parts.plain.link(from, to: to)
            _ = parts.inodes.node(for: from, sharing: UInt64(try parts.plain.status(from).st_ino))
            return try attributes.entry(for: .plain(to))
        }
    }

    private func holdsItems(_ folder: MountPath) -> Bool {
        parts.index.hasItems(inside: folder) || parts.newItemFiles.hasFiles(inside: folder)
    }

    // MARK: Renaming

    /// `renamer`: who asked (nil: not known); a file renamed over an item is its writer's save.
    func rename(parent: UInt64, name: String, newParent: UInt64, newName: String, flags: RenameFlags,
                by renamer: @autoclosure () -> ProcessID? = nil) throws {
        try saveBeforeMoving(parent: parent, name: name)
        try saveBeforeMoving(parent: newParent, name: newName)
        try mutating {
            let from = try writablePath(parent: parent, name: name)
            let to = try writablePath(parent: newParent, name: newName)
            guard !flags.contains(.exchange) else { throw Errno.invalid }
            guard let source = parts.names.resolve(from) else { throw Errno.noEntry }
            let target = parts.names.resolve(to)
            if target != nil && flags.contains(.noReplace) { throw Errno.exists }
            guard source != target else { return }
            switch (source, PathRules.isItemPath(to)) {
            case (.item(let id), true):
                try moveItem(id, from: from, to: to, replacing: target)
            case (.item(let id), false):
                try releaseItem(id, to: to, replacing: target)
            case (.plain, true):
                try adoptPlainFile(from: from, to: to, replacing: target, by: renamer())
            case (.plain, false):
                // Two names of one file: rename does nothing, as POSIX has it.
                if target != nil, let source = try? parts.plain.status(from), let other = try? parts.plain.status(to),
                   source.st_ino == other.st_ino, source.st_dev == other.st_dev { return }
                if case .plain(let replaced)? = target, !parts.plain.isDirectory(replaced) { keepOpenWhileKnown(replaced) }
                try movePlain(from: from, to: to)
            case (.newItemFile(let pending), true):
                try removeForReplacement(target)
                parts.newItemFiles.move(pending, to: to)
                if let inode = parts.inodes.existingInode(for: source) { try parts.buffers.retarget(inode, toNewFileAt: to.rawValue) }
            case (.newItemFile, false):
                throw Errno.crossDevice  // not saved yet, so no bytes to keep as a plain file
            case (.status, _):
                throw Errno.accessDenied
            }
        }
    }

    /// Saves the writes to the file at `name` before a rename or unlink moves or replaces it,
    /// so they go where the file was when they were made. Outside `namespaceLock` (see the lock
    /// order); a write that slips in before the namespace change is saved wherever the file went.
    private func saveBeforeMoving(parent: UInt64, name: String) throws {
        if let inode = parts.names.existingInode(parent: parent, name: name) { try saves.save(inode) }
    }

    /// The replaced target of a rename leaves: an item to the trash, an unsaved new file away.
    private func removeForReplacement(_ target: NodeKey?) throws {
        switch target {
        case .item(let id):
            try parts.store.write { try $0.trash(id: id) }
            parts.view.removed(id)
        case .newItemFile(let pending):
            parts.newItemFiles.remove(pending)
        case .plain(let path):
            if parts.plain.isDirectory(path) { throw Errno.isDirectory }
            keepOpenWhileKnown(path)
        case .status:
            throw Errno.accessDenied
        case nil:
            return
        }
    }

    /// Item → new `*.md` name: the same item at a new path (its title does not change).
    private func moveItem(_ id: ItemID, from: MountPath, to: MountPath, replacing target: NodeKey?) throws {
        guard PathRules.itemKind(under: from) == PathRules.itemKind(under: to) else {
            throw Errno.crossDevice  // a book is no note: `mv` falls back to copy + delete
        }
        try parts.folders.ensure(to.parent)
        try removeForReplacement(target)
        parts.view.recorded(try parts.store.write { try $0.move(id: id, to: to.rawValue) })
    }

    /// Item → plain name (`x~`, `x___jb_old___`, `.trash/x.md`): the item leaves the library
    /// for the store's trash and the file lives on as a plain file with the same bytes, times,
    /// mode and user attributes, so the editor's backup is real and recreating a file with its
    /// `id:` brings the item back.
    private func releaseItem(_ id: ItemID, to: MountPath, replacing target: NodeKey?) throws {
        guard let record = try parts.store.record(id: id) else { throw Errno.noEntry }
        try removeForReplacement(target)
        try parts.plain.writeAtomically(Array(record.content), to: to)
        do {
            try parts.plain.apply(ItemCommitter.FileMetadata(modified: record.modified, permissions: record.permissions,
                                                       attributes: try parts.store.extendedAttributes(id: id)), to: to)
            try parts.store.write { try $0.trash(id: id) }
        } catch {
            try? parts.plain.unlink(to)
            throw error
        }
        parts.view.removed(id)
        if let inode = parts.inodes.existingInode(for: .item(id)) {
            parts.inodes.rekey(inode, to: .plain(to))
            parts.buffers.releaseForgotten(inode)
        }
    }

    /// Plain file → item path: an atomic save (temp file renamed over the item), an item coming
    /// back (a file with a trashed item's `id:`), or a new item. The item takes the file's
    /// times, mode and user attributes along with its bytes. The replaced item file's inode
    /// keeps the bytes it showed for the programs still reading it, as a disk filesystem's would.
    ///
    /// An atomic save is committed in the background like a writer's close (the rename does not
    /// wait for the store); a new or returning item is committed here, since it changes names.
    private func adoptPlainFile(from: MountPath, to: MountPath, replacing target: NodeKey?, by renamer: ProcessID?) throws {
        guard !parts.plain.isDirectory(from) else { throw Errno.notPermitted }
        // Never read into memory: bytes over the limit stay the plain file they are.
        guard try parts.plain.status(from).st_size <= TooLargeFiles.largestItemFile else {
            parts.logger.warning("renaming \(from) to \(to) refused: it is over the \(TooLargeFiles.largestItemFile) bytes an item file may hold")
            throw Errno.fileTooLarge
        }
        let bytes = try parts.plain.readAll(from)
        let metadata = try parts.plain.metadata(of: from)
        let tempInode = parts.inodes.existingInode(for: .plain(from))
        // Closed while still linked (cheap): the file moves into the journal, or the disk frees
        // it in the background.
        if let tempInode { parts.descriptors.forget(tempInode) }
        var moved = false
        if case .item(let id) = target, let tempInode, parts.index.summary(id: id)?.isPlaceholder == false {
            moved = try saves.adoptRenamed(bytes, from: parts.plain.realPath(from), as: tempInode, into: id, by: renamer,
                                           carrying: metadata)
        } else {
            let destination: ItemCommitter.Target
            var replacedInode: (inode: UInt64, modified: Date)?
            switch target {
            case .item(let id):
                destination = .existing(id, readFrom: saves.served.readFrom(id, by: [renamer]))
                if let inode = parts.inodes.kernelInode(for: .item(id)) {
                    replacedInode = (inode, parts.index.summary(id: id)?.modified ?? Date())
                }
            case .newItemFile(let pending):
                parts.newItemFiles.remove(pending)
                destination = .new(at: to)
            default:
                try parts.folders.ensure(to.parent)
                destination = .new(at: to)
            }
            let outcome = try saves.commitRenamed(bytes, at: to, into: destination, by: renamer, carrying: metadata,
                                                  as: tempInode)
            if let replacedInode, let file = outcome.replaced {
                // It showed that version up to the rename, whatever the index says since.
                _ = parts.buffers.freeze(replacedInode.inode, bytes: Array(file.content), version: file.version,
                                         modified: replacedInode.modified) { true }
            }
            // From now on its reads and writes are the item's (a program may still write the
            // temp file it renamed: those writes are saved into the item).
            if let tempInode { parts.inodes.rekey(tempInode, to: .item(outcome.record.item.id)) }
        }
        if !moved { try parts.plain.removeInBackground(from) }
        // The kernel holds the temp file's attributes (mode, owner, times): have it ask again.
        if let tempInode { parts.kernel.invalidate(.attributes(Inode(tempInode))) }
    }

    /// Plain → plain, files or folders. A folder holding items moves them in the store too; one
    /// that would carry items out of their kind's tree is refused with `EXDEV` so `mv` copies
    /// (each item then leaves through `rm`, to the trash).
    private func movePlain(from: MountPath, to: MountPath) throws {
        let isFolder = parts.plain.isDirectory(from)
        guard isFolder, holdsItems(from) else {
            try parts.plain.rename(from, to: to)
            parts.inodes.detach(.plain(to))  // what it replaced
            if isFolder {
                parts.inodes.renameFolder(from, to: to)
            } else {
                parts.inodes.renameFile(from, to: to)
            }
            return
        }
        guard PathRules.isItemFolder(to), PathRules.itemKind(under: from) == PathRules.itemKind(under: to),
              !parts.newItemFiles.hasFiles(inside: from) else {
            throw Errno.crossDevice
        }
        try parts.plain.rename(from, to: to)
        do {
            try parts.store.write { try $0.moveFolder(from: from.rawValue, to: to.rawValue) }
        } catch {
            try? parts.plain.rename(to, to: from)
            throw error
        }
        parts.inodes.renameFolder(from, to: to)
        for id in parts.index.ids(inside: from) { try parts.view.reload(id) }
    }
}
