import Foundation
import ShelfStore
import ShelfSystem

/// Everything a library's mount shows that is not an item: user folders, `.obsidian/`,
/// `.git/`, attachments, a `.gitignore` — the plain-file area, as `shelf export` copies it out
/// and `shelf import` of an export copies it back, so an export is a backup of the whole tree.
enum PlainTree {
    enum Kind: Equatable {
        case folder
        case file
        case symlink(target: String)
        /// A FIFO, socket or device: not copied.
        case other
    }

    struct Entry {
        /// Relative to the tree's root.
        var path: String
        var kind: Kind
    }

    /// Whether `path` names an item file (`Books/…/x.md`, `Notes/x.md`) rather than a plain one.
    static func isItemPath(_ path: String) -> Bool {
        let name = (path as NSString).lastPathComponent
        let folder = (path as NSString).deletingLastPathComponent
        return ItemPath.isItemFileName(name) && ItemPath.itemKind(ofFolder: folder) != nil
    }

    /// Every plain entry under `root`, each folder before what it holds: not item files, not
    /// Shelf's own half-written files, not the names in `excludedAtRoot`.
    static func entries(under root: URL, excludedAtRoot: Set<String>) -> [Entry] {
        var entries: [Entry] = []
        var waiting = [""]
        while let folder = waiting.popLast() {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path + "/" + folder)) ?? []
            for name in names.sorted() {
                let path = folder.isEmpty ? name : folder + "/" + name
                if name.hasPrefix(AtomicFile.temporaryPrefix) || (folder.isEmpty && excludedAtRoot.contains(name))
                    || isItemPath(path) { continue }
                let kind = kind(at: root.path + "/" + path)
                entries.append(Entry(path: path, kind: kind))
                if kind == .folder { waiting.append(path) }
            }
        }
        return entries
    }

    /// What is at `path` (not following a symlink), or nil if nothing is.
    static func kind(at path: String) -> Kind {
        switch FileStatus(of: path)?.kind {
        case .folder: .folder
        case .file: .file
        case .symlink: .symlink(target: (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "")
        case .other, nil: .other
        }
    }

    /// Gives the file at `path` the mode bits and modification time of `source`, as a copy keeps them.
    static func apply(_ source: FileStatus, to path: String) throws(SystemCallError) {
        try FileMetadata.setMode(source.mode, of: path)
        try FileMetadata.setModified(source.modified, of: path)
    }

    /// Makes `path` a symlink to `target`, replacing whatever file or symlink is there.
    static func placeSymlink(to target: String, at path: String) throws(SystemCallError) {
        let temporary = (path as NSString).deletingLastPathComponent + "/" + AtomicFile.temporaryName()
        try FileEntries.makeSymlink(at: temporary, to: target)
        try AtomicFile.publish(temporary, as: path)
    }

    /// A fingerprint of what is at `path` (a file's bytes, a symlink's target), for the export
    /// manifest; nil when there is nothing or a folder.
    static func fingerprint(at path: String) -> String? {
        switch kind(at: path) {
        case .file: FileManager.default.contents(atPath: path).map(fingerprint(of:))
        case .symlink(let target): "symlink:" + fingerprint(of: Data(target.utf8))
        case .folder, .other: nil
        }
    }

    static func fingerprint(of data: Data) -> String {
        String(StableHash.fnv1a64(data), radix: 16) + "-\(data.count)"
    }
}
