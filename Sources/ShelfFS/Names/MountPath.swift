import ShelfModel
import ShelfStore

/// A path inside the mount, relative to its root, without leading or trailing slash
/// (`""` is the root, `Books/Shelf 1/Dune - Frank Herbert.md` an item file).
///
/// The store keeps item paths in this same form, so a mount path and a record's `path` compare
/// directly.
struct MountPath: Hashable, Sendable, CustomStringConvertible {
    let rawValue: String

    init(_ rawValue: String) { self.rawValue = rawValue }

    /// Paths compare and hash by their bytes, as the kernel names files: two names that are
    /// canonically equivalent Unicode but different bytes are two different files.
    static func == (a: MountPath, b: MountPath) -> Bool { a.rawValue.hasSameBytes(as: b.rawValue) }
    func hash(into hasher: inout Hasher) { rawValue.hashBytes(into: &hasher) }

    static let root = MountPath("")
    /// The hidden read-only status folder.
    static let statusFolder = MountPath(".shelf")

    var isRoot: Bool { rawValue.isEmpty }
    var description: String { rawValue.isEmpty ? "/" : rawValue }

    var components: [Substring] { rawValue.split(separator: "/") }

    /// The last component (`""` for the root).
    var name: String {
        guard let slash = lastSlash else { return rawValue }
        return String(rawValue[rawValue.index(after: slash)...])
    }

    /// The folder holding this path (the root for top-level entries and the root itself).
    var parent: MountPath {
        guard let slash = lastSlash else { return .root }
        return MountPath(String(rawValue[..<slash]))
    }

    /// Found in the UTF-8 bytes, not by Character: a search by Character costs most of a
    /// 100,000-item mount's start-up, and would miss a `/` that a combining mark follows.
    private var lastSlash: String.Index? {
        rawValue.utf8.lastIndex(of: UInt8(ascii: "/"))
    }

    func appending(_ name: String) -> MountPath {
        isRoot ? MountPath(name) : MountPath(rawValue + "/" + name)
    }

    /// Whether `self` is `folder` or lies somewhere below it.
    func isInside(_ folder: MountPath) -> Bool {
        folder.isRoot || self == folder || rawValue.hasBytePrefix(folder.rawValue + "/")
    }

    /// `self` with its leading `from` folder replaced by `to` (for folder renames).
    func replacingPrefix(_ from: MountPath, with to: MountPath) -> MountPath {
        guard isInside(from), !from.isRoot else { return self }
        return MountPath(to.rawValue + rawValue.dropFirst(from.rawValue.count))
    }
}

/// Which mount paths are items and which are plain files, by the store's rule (``ItemPath``).
///
/// Everything under `Books/` and `Notes/` named `*.md` (and not hidden) is an item file; every
/// other name — user folders, attachments, and the temp, swap and backup files editors make
/// while saving (`4913`, `.x.md.swp`, `x.md~`, `sedAbC123`, `.goutputstream-XYZ`,
/// `x.md___jb_tmp___`, `.#x.md`) — is a plain file kept verbatim. Editor names either lack the
/// `.md` ending or start with a dot, so one rule covers them all.
enum PathRules {
    /// The kind whose items live under `path`, if `path` is inside `Books/` or `Notes/`.
    static func itemKind(under path: MountPath) -> ItemKind? {
        guard let top = path.components.first else { return nil }
        return ItemKind(folderName: String(top))
    }

    /// Whether `folder` is `Books`, `Notes` or one of their (non-hidden) sub-folders.
    static func isItemFolder(_ folder: MountPath) -> Bool {
        ItemPath.itemKind(ofFolder: folder.rawValue) != nil
    }

    /// Whether `path` names an item file (whether or not an item is there now).
    static func isItemPath(_ path: MountPath) -> Bool {
        !path.isRoot && isItemFolder(path.parent) && ItemPath.isItemFileName(path.name)
    }

    /// Whether `path` is the status folder or inside it.
    static func isStatusPath(_ path: MountPath) -> Bool {
        path.isInside(.statusFolder) && !path.isRoot
    }
}
