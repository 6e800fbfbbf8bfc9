import Foundation
import Glibc
import FuseKit
import ShelfModel
import ShelfStore

/// Creating, removing and renaming names: where editors' save dances (vim's `x → x~`,
/// JetBrains' `___jb_tmp___`, `sed -i`, atomic replace) turn back into one item keeping its
/// identity. DESIGN.md's rename table is the contract; `rename` implements it row by row.
extension ShelfFileSystem {
    private func mutating<T>(_ body: () throws -> T) throws -> T {
        namespaceLock.lock()
        defer { namespaceLock.unlock() }
        return try body()
    }

    /// The path `name` would have in folder `parent`, refusing the read-only status folder.
    private func writablePath(parent: UInt64, name: String) throws -> MountPath {
        let path = try folderPath(parent).appending(name)
        guard !PathRules.isStatusPath(path) else { throw Errno(EACCES) }
        return path
    }

    // MARK: Creating

    func create(parent: UInt64, name: String, mode: UInt32, flags: OpenFlags) throws -> CreatedFile {
        try mutating {
            let path = try writablePath(parent: parent, name: name)
            if let existing = resolve(path) {
                guard !flags.exclusive else { throw Errno(EEXIST) }
                let entry = try entry(for: existing, counting: true)
                return CreatedFile(entry: entry, file: try open(entry.attributes.inode.rawValue, flags: flags))
            }
            if PathRules.isItemPath(path) {
                // Not an item until its first save decides which one (its `id:` may name a
                // trashed item coming back).
                let pending = UUID()
                newItemFiles.withLock { $0[pending] = path }
                let entry = try entry(for: .newItemFile(pending), counting: true)
                return CreatedFile(entry: entry, file: try open(entry.attributes.inode.rawValue, flags: flags))
            }
            let descriptor = try plain.open(path, flags: flags.rawValue | O_CREAT, mode: mode_t(mode & 0o7777))
            let entry = try entry(for: .plain(path), counting: true)
            let handle = openFiles.add(.plain(PlainOpenFile(inode: entry.attributes.inode.rawValue, descriptor: descriptor)))
            return CreatedFile(entry: entry, file: OpenedFile(handle: handle))
        }
    }

    func makeNode(parent: UInt64, name: String, mode: UInt32, device: UInt64) throws -> Entry {
        try mutating {
            let path = try writablePath(parent: parent, name: name)
            guard !PathRules.isItemPath(path) else { throw Errno(EPERM) }
            guard mknod(plain.realPath(path), mode_t(mode), dev_t(device)) == 0 else { throw Errno.current }
            return try entry(for: .plain(path), counting: true)
        }
    }

    func makeDirectory(parent: UInt64, name: String, mode: UInt32) throws -> Entry {
        try mutating {
            let path = try writablePath(parent: parent, name: name)
            // A folder named like an item file would be hidden behind the item overlay.
            guard !PathRules.isItemPath(path) else { throw Errno(EPERM) }
            try plain.makeDirectory(path, mode: mode_t(mode & 0o7777))
            return try entry(for: .plain(path), counting: true)
        }
    }

    func makeSymlink(parent: UInt64, name: String, target: String) throws -> Entry {
        try mutating {
            let path = try writablePath(parent: parent, name: name)
            guard !PathRules.isItemPath(path) else { throw Errno(EPERM) }
            try plain.symlink(path, target: target)
            return try entry(for: .plain(path), counting: true)
        }
    }

    // MARK: Removing

    /// `rm` of an item sends it to the store's trash (`shelf trash restore` brings it back).
    func unlink(parent: UInt64, name: String) throws {
        try mutating {
            let path = try writablePath(parent: parent, name: name)
            switch resolve(path) {
            case .item(let id):
                try store.write { try $0.trash(id: id) }
                index.remove(id)
            case .newItemFile(let pending):
                newItemFiles.withLock { $0[pending] = nil }
            case .plain:
                try plain.unlink(path)
                inodes.detach(.plain(path))
            case .status:
                throw Errno(EACCES)
            case nil:
                throw Errno(ENOENT)
            }
        }
    }

    func removeDirectory(parent: UInt64, name: String) throws {
        try mutating {
            let path = try writablePath(parent: parent, name: name)
            guard ItemKind(folderName: path.rawValue) == nil else {
                throw Errno(EBUSY)  // Books/ and Notes/ always exist
            }
            guard !holdsItems(path) else { throw Errno(ENOTEMPTY) }
            try plain.removeDirectory(path)
            inodes.detach(.plain(path))
        }
    }

    private func holdsItems(_ folder: MountPath) -> Bool {
        index.hasItems(inside: folder) || newItemFiles.withLock { $0.values.contains { $0.isInside(folder) } }
    }

    // MARK: Renaming

    func rename(parent: UInt64, name: String, newParent: UInt64, newName: String, flags: RenameFlags) throws {
        try mutating {
            let from = try writablePath(parent: parent, name: name)
            let to = try writablePath(parent: newParent, name: newName)
            guard !flags.contains(.exchange) else { throw Errno(EINVAL) }
            guard let source = resolve(from) else { throw Errno(ENOENT) }
            let target = resolve(to)
            if target != nil && flags.contains(.noReplace) { throw Errno(EEXIST) }
            guard source != target else { return }
            switch (source, PathRules.isItemPath(to)) {
            case (.item(let id), true):
                try moveItem(id, from: from, to: to, replacing: target)
            case (.item(let id), false):
                try releaseItem(id, to: to, replacing: target)
            case (.plain, true):
                try adoptPlainFile(from: from, to: to, replacing: target)
            case (.plain, false):
                try movePlain(from: from, to: to)
            case (.newItemFile(let pending), true):
                try removeForReplacement(target)
                newItemFiles.withLock { $0[pending] = to }
            case (.newItemFile, false):
                throw Errno(EXDEV)  // not saved yet, so no bytes to keep as a plain file
            case (.status, _):
                throw Errno(EACCES)
            }
        }
    }

    /// The replaced target of a rename leaves: an item to the trash, an unsaved new file away.
    private func removeForReplacement(_ target: NodeKey?) throws {
        switch target {
        case .item(let id):
            try store.write { try $0.trash(id: id) }
            index.remove(id)
        case .newItemFile(let pending):
            newItemFiles.withLock { $0[pending] = nil }
        case .plain(let path):
            if plain.isDirectory(path) { throw Errno(EISDIR) }
        case .status:
            throw Errno(EACCES)
        case nil:
            return
        }
    }

    /// Item → new `*.md` name: the same item at a new path (its title does not change).
    private func moveItem(_ id: ItemID, from: MountPath, to: MountPath, replacing target: NodeKey?) throws {
        guard PathRules.itemKind(under: from) == PathRules.itemKind(under: to) else {
            throw Errno(EXDEV)  // a book is no note: `mv` falls back to copy + delete
        }
        try ensureFolder(to.parent)
        try removeForReplacement(target)
        let record = try store.write { try $0.move(id: id, to: to.rawValue) }
        index.put(ItemSummary(record))
    }

    /// Item → plain name (`x~`, `x___jb_old___`, `.trash/x.md`): the item leaves the library
    /// for the store's trash and the file lives on as a plain file with the same bytes, so the
    /// editor's backup is real and recreating a file with its `id:` brings the item back.
    private func releaseItem(_ id: ItemID, to: MountPath, replacing target: NodeKey?) throws {
        guard let record = try store.record(id: id) else { throw Errno(ENOENT) }
        try removeForReplacement(target)
        try plain.writeAtomically(Array(record.content.utf8), to: to)
        do {
            try store.write { try $0.trash(id: id) }
        } catch {
            try? plain.unlink(to)
            throw error
        }
        index.remove(id)
        if let inode = inodes.existingInode(for: .item(id)) {
            inodes.rekey(inode, to: .plain(to))
            cachedVersions.withLock { $0[inode] = nil }
        }
    }

    /// Plain file → item path: an atomic save (temp file renamed over the item), an item coming
    /// back (a file with a trashed item's `id:`), or a new item.
    private func adoptPlainFile(from: MountPath, to: MountPath, replacing target: NodeKey?) throws {
        guard !plain.isDirectory(from) else { throw Errno(EPERM) }
        let bytes = try plain.readAll(from)
        let destination: ItemCommitter.Target
        switch target {
        case .item(let id):
            destination = .existing(id, basedOn: nil)
        case .newItemFile(let pending):
            newItemFiles.withLock { $0[pending] = nil }
            destination = .new(at: to)
        default:
            try ensureFolder(to.parent)
            destination = .new(at: to)
        }
        let outcome = try committer.commit(bytes, at: to, into: destination)
        try plain.unlink(from)
        index.put(ItemSummary(outcome.record))
        if let inode = inodes.existingInode(for: .plain(from)) {
            // Writes so far are in this save; only later ones are saved again at close.
            for open in openFiles.plainFiles(of: inode) { _ = open.takeWritten() }
            inodes.rekey(inode, to: .item(outcome.record.item.id))
            cachedVersions.withLock { $0[inode] = nil }
            // The kernel knows this inode's size as the temp file's: have it ask again, so
            // opens can use the page cache (they bypass it while the size is unconfirmed).
            invalidate(outcome.showsWrittenBytes ? .attributes(Inode(inode)) : .content(Inode(inode)))
        }
    }

    /// Plain → plain, files or folders. A folder holding items moves them in the store too; one
    /// that would carry items out of their kind's tree is refused with `EXDEV` so `mv` copies
    /// (each item then leaves through `rm`, to the trash).
    private func movePlain(from: MountPath, to: MountPath) throws {
        guard plain.isDirectory(from), holdsItems(from) else {
            try plain.rename(from, to: to)
            inodes.renameFolder(from, to: to)
            return
        }
        guard PathRules.isItemFolder(to), PathRules.itemKind(under: from) == PathRules.itemKind(under: to),
              newItemFiles.withLock({ !$0.values.contains { $0.isInside(from) } }) else {
            throw Errno(EXDEV)
        }
        try plain.rename(from, to: to)
        do {
            try store.write { try $0.moveFolder(from: from.rawValue, to: to.rawValue) }
        } catch {
            try? plain.rename(to, to: from)
            throw error
        }
        inodes.renameFolder(from, to: to)
        for id in index.ids(inside: from) {
            if let summary = try store.summary(id: id) { index.put(summary) }
        }
    }
}
