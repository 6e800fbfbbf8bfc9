import Foundation
import ShelfMarkdown
import ShelfStore
import ShelfSystem

/// Syncs a library's plain files — attachments, `.obsidian/` settings, the user's folders:
/// everything the mount shows that is not a book or a note. They have no record and no id: a
/// file is its path, its bytes, its time and mode.
///
/// A scan finds what changed since the state this device last agreed with the cloud on
/// (files whose size, time and mode are unchanged are not read). Arriving files are written
/// whole under a temporary name and renamed into place. Where two changes of one file cannot
/// both stand, the newest keeps the path and the other is kept beside it as
/// `name (conflict YYYY-MM-DD HHMMSS device).ext`; a change beats a concurrent delete.
/// `.shelfignore` (and the defaults below) keeps editor temp files and per-device state out.
struct PlainFileSync {
    /// The library's plain-file area.
    let root: URL
    let ignore: IgnoreRules

    init(root: URL) {
        self.root = root
        ignore = IgnoreRules(root: root)
    }

    static let fileKind = "file"
    static let folderKind = "folder"

    /// The change key of the plain file at `path` (items use their ids).
    static func key(_ path: String) -> String { "file:" + path }

    static func isPlain(_ change: CloudChange) -> Bool {
        change.kind == fileKind || change.kind == folderKind
    }

    // MARK: Applying

    /// What applying a change did to its path on disk.
    enum DiskEffect: Equatable {
        case none
        /// Wrote or removed it; `wasThere`: a file or folder was at the path before.
        case changed(wasThere: Bool)
    }

    /// Applies a change of a plain file from another device (inside the store transaction
    /// that records it in `writer`'s ledger); returns what it did to the path on disk. `device`:
    /// this one, for naming a conflict copy of what was changed here.
    func apply(_ change: CloudChange, with writer: StoreWriter, device: DeviceID,
               content: (ContentHash) throws -> Data?, deviceName: (DeviceID) -> String) throws -> DiskEffect {
        // What stays on each device (a device whose rules were older may have sent it) stays out.
        guard !ignore.excludes(change.path) else { return .none }
        let synced = try writer.ledger.plainFileChange(of: change.path).map { try CloudCoding.decoder.decode(CloudChange.self, from: $0) }
        guard synced?.id != change.id else { return .none }
        func bytes(_ change: CloudChange) throws -> Data? {
            guard change.kind == Self.fileKind, change.operation == .put else { return nil }
            guard let bytes = try content(change.hash) else { throw ChangeApplier.ContentNotArrived(hash: change.hash) }
            return bytes
        }
        func keepCopy(_ state: ItemState, time: Date, device: DeviceID, bytes: Data?) throws {
            guard state.kind == Self.fileKind else { return }
            try write(state, at: conflictCopyPath(of: state.path, time: time, device: deviceName(device)), bytes: bytes)
        }
        // Two devices changed it from one state, both in the cloud: newest wins, a change
        // beats a delete, and every device keeps the same copy of the other.
        var winner = change
        if let synced, change.base != synced.id {
            let newer = change.isNewer(than: synced) ? change : synced
            let older = newer == change ? synced : change
            winner = older.operation == .put && newer.operation == .delete ? older : newer
            let loser = winner == change ? synced : change
            if loser.operation == .put, winner.operation == .put, loser.hash != winner.hash {
                try keepCopy(loser.state, time: loser.time, device: loser.device, bytes: try bytes(loser))
            }
        }
        try writer.ledger.setPlainFileChange(try CloudCoding.encoder.encode(winner), of: change.path)
        let local = state(of: change.path, known: synced)
        let changedHere = local.map { !$0.matches(synced?.state) } ?? (synced?.operation == .put)
        guard changedHere, let local else {
            if winner.id == synced?.id { return .none }
            try write(winner.state, at: winner.path, bytes: try bytes(winner))
            return .changed(wasThere: local != nil)
        }
        // Changed here too, not sent yet: the newer side takes the path and the other is kept
        // beside it; a delete from elsewhere loses to the change here.
        guard winner.operation == .put, local.hash != winner.hash || local.kind != winner.kind else { return .none }
        if local.modified > winner.time || winner.kind == Self.folderKind {
            try keepCopy(winner.state, time: winner.time, device: winner.device, bytes: try bytes(winner))
        } else {
            try keepCopy(local, time: local.modified, device: device, bytes: self.bytes(at: local.path))
            try write(winner.state, at: winner.path, bytes: try bytes(winner))
        }
        return .changed(wasThere: true)
    }

    // MARK: Scanning

    /// What is on disk now, by path; `known` lets unchanged files go unread.
    func scan(known: [String: CloudChange]) -> [String: ItemState] {
        var states: [String: ItemState] = [:]
        var pending = [""]
        while let folder = pending.popLast() {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: real(folder))) ?? []
            for name in names where !name.hasPrefix(AtomicFile.temporaryPrefix) {
                let path = folder.isEmpty ? name : folder + "/" + name
                // A name other devices would refuse (a control character in it) stays here:
                // sent, it would hold back every later batch of this device everywhere.
                guard !ignore.excludes(path), (try? ItemPath.checkComponents(of: path)) != nil,
                      let state = state(of: path, known: known[path]) else { continue }
                states[path] = state
                if state.kind == Self.folderKind { pending.append(path) }
            }
        }
        // The top folders of items always exist; they are not the user's.
        states["Books"] = nil
        states["Notes"] = nil
        return states
    }

    /// The state of `path` on disk (nil if absent or neither file nor folder).
    func state(of path: String, known: CloudChange?) -> ItemState? {
        guard let status = FileStatus(of: real(path)) else { return nil }
        // Permission bits only: a cloud refuses setuid, setgid and sticky (CloudInputRules).
        let permissions = status.mode & 0o777
        switch status.kind {
        case .folder:
            return ItemState(operation: .put, kind: Self.folderKind, path: path, hash: ContentHash(of: Data()), size: 0,
                             modified: Date(timeIntervalSince1970: 0), permissions: permissions, attributes: [:])
        case .file:
            let modified = status.modified.date
            var state = ItemState(operation: .put, kind: Self.fileKind, path: path, hash: ContentHash(of: Data()),
                                  size: status.size, modified: modified, permissions: permissions, attributes: [:])
            if let known, known.operation == .put, known.size == state.size, known.permissions == permissions,
               abs(known.modified.timeIntervalSince(modified)) < 1e-6 {
                state.hash = known.hash
            } else {
                guard let bytes = FileManager.default.contents(atPath: real(path)) else { return nil }
                state.hash = ContentHash(of: bytes)
                state.size = bytes.count
            }
            return state
        case .symlink, .other:
            return nil
        }
    }

    func bytes(at path: String) -> Data? {
        FileManager.default.contents(atPath: real(path))
    }

    // MARK: Writing

    /// Makes `path` on disk what `state` says, with `bytes` for a file.
    func write(_ state: ItemState, at path: String, bytes: Data?) throws {
        let target = real(path)
        if state.operation == .delete {
            // A folder with files stays.
            if state.kind == Self.folderKind { try? FileEntries.removeEmptyFolder(target) } else { try? FileEntries.removeFile(target) }
            return
        }
        try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        if state.kind == Self.folderKind {
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
            try? FileMetadata.setMode(state.permissions, of: target)
            return
        }
        try AtomicFile.write(bytes ?? Data(), to: target)
        try? FileMetadata.setMode(state.permissions, of: target)
        try? FileMetadata.setModified(FileStatus.Time(state.modified), of: target)
    }

    /// A free name beside `path` for the conflict copy of a change made at `time` on `device`.
    func conflictCopyPath(of path: String, time: Date, device: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let fileExtension = (name as NSString).pathExtension
        let stem = fileExtension.isEmpty ? name : (name as NSString).deletingPathExtension
        let copyName = FileNaming.conflictCopyName(of: stem + ".md", time: time, device: device).dropLast(3)
            + (fileExtension.isEmpty ? "" : "." + fileExtension)
        let copy = folder.isEmpty ? String(copyName) : folder + "/" + copyName
        return FileManager.default.fileExists(atPath: real(copy)) ? conflictCopyPath(of: copy, time: time, device: device + "'") : copy
    }

    private func real(_ path: String) -> String {
        path.isEmpty ? root.path : root.path + "/" + path
    }
}

/// Which plain files stay on this device: `.shelfignore` in the plain-file root (one glob per
/// line, `#` comments; a pattern without `/` matches a name in any folder) and the defaults —
/// editor swap and backup files, Obsidian's per-device workspace layout, and what Syncthing
/// keeps in a folder it shares (its marker, ignores, old versions, files on their way).
struct IgnoreRules {
    static let defaults = [
        ".*.swp", ".*.swx", "*~", ".#*", "#*#", "*___jb_tmp___", "*___jb_old___", "4913", ".DS_Store", "Thumbs.db",
        "desktop.ini", ".obsidian/workspace*.json", ".shelfignore",
        ".stfolder", ".stignore", ".stversions", ".syncthing.*.tmp", "~syncthing~*.tmp",
    ]

    let patterns: [String]

    init(root: URL) {
        let own = (try? String(contentsOf: root.appendingPathComponent(".shelfignore"), encoding: .utf8))?
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") } ?? []
        patterns = Self.defaults + own
    }

    func excludes(_ path: String) -> Bool {
        let name = (path as NSString).lastPathComponent
        return patterns.contains { pattern in
            pattern.contains("/") ? fnmatch(pattern, path, FNM_PATHNAME) == 0 : fnmatch(pattern, name, 0) == 0
        }
    }
}
