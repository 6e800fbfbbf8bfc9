import ShelfModel

/// Where item files may live: `<Kind folder>/[sub folders/]<name>.md`, relative to the library
/// root — the one rule for "is this an item path", shared by the store and the mount.
/// Checked on every write that sets a path, so the mount and exports never meet a path they
/// cannot show.
///
/// Hidden names are plain files: a name or folder starting with a dot (`.x.md.swp`,
/// `Books/.trash/x.md`) is never an item, so editors' temp files and trash folders stay verbatim.
public enum ItemPath {
    /// Whether `name` is an item file name: `*.md`, not hidden, more than the extension.
    @inlinable  // asked on every lookup: specialized where it is called
    public static func isItemFileName(_ name: some StringProtocol) -> Bool {
        name.hasByteSuffix(".md") && name.utf8.count > 3 && !name.hasBytePrefix(".")
    }

    /// The kind of the items that live in `folder` (`Books`, `Notes/Ideas`); nil for every other
    /// folder, hidden ones inside a kind's tree included. One pass over the bytes: every
    /// lookup asks.
    @inlinable
    public static func itemKind(ofFolder folder: some StringProtocol) -> ItemKind? {
        let bytes = folder.utf8
        var topEnd = bytes.endIndex
        var startsComponent = true
        for index in bytes.indices {
            let byte = bytes[index]
            if startsComponent && byte == UInt8(ascii: ".") { return nil }
            startsComponent = byte == UInt8(ascii: "/")
            if startsComponent && topEnd == bytes.endIndex { topEnd = index }
        }
        let top = bytes[..<topEnd]
        return ItemKind.allCases.first { $0.folderName.utf8.elementsEqual(top) }
    }

    /// The longest file name (NAME_MAX) and path (PATH_MAX less its NUL) Linux takes, in bytes.
    public static let maxNameBytes = 255
    public static let maxPathBytes = 4095

    /// The kind of item that may live at `path`; throws `invalidPath` for any other path. For
    /// paths that arrived from elsewhere (an old library, a cloud) before they are used.
    public static func validate(_ path: String) throws -> ItemKind {
        try checkComponents(of: path)
        let top = path.utf8.firstIndex(of: UInt8(ascii: "/")).map { String(path[..<$0]) } ?? path
        guard let kind = ItemKind(folderName: top) else {
            throw StoreError.invalidPath(path, reason: "items live under Books/ or Notes/, e.g. Notes/Title.md")
        }
        try validate(path, for: kind)
        return kind
    }

    /// Throws `invalidPath` unless `path` is a valid place for an item of `kind`.
    public static func validate(_ path: String, for kind: ItemKind) throws {
        try checkComponents(of: path)
        guard path.hasBytePrefix(kind.folderName + "/") else {
            throw StoreError.invalidPath(path, reason: "a \(kind.rawValue) lives under \(kind.folderName)/, e.g. \(kind.folderName)/Title.md")
        }
        guard itemKind(ofFolder: folder(of: path)) == kind else {
            throw StoreError.invalidPath(path, reason: "a folder starting with a dot is hidden and holds plain files, not items; drop the leading dot")
        }
        let name = fileName(of: path)
        guard name.hasByteSuffix(".md"), name != ".md" else {
            throw StoreError.invalidPath(path, reason: "item files end in .md after a name, e.g. \(kind.folderName)/Title.md")
        }
        guard isItemFileName(name) else {
            throw StoreError.invalidPath(path, reason: "a name starting with a dot is a hidden plain file, not an item; drop the leading dot")
        }
    }

    /// Checks the two sides of a folder rename and returns the kind of the items it moves.
    /// Throws `invalidPath` for a kind's top folder itself, a move across kinds, or a folder
    /// moved into itself or over one of its parents (which `rename(2)` refuses too).
    static func validateFolderMove(from: String, to: String) throws -> ItemKind {
        let kind = try subfolderKind(from)
        guard try subfolderKind(to) == kind else {
            throw StoreError.invalidPath(to, reason: "folders of \(kind.folderName)/ can only move within \(kind.folderName)/")
        }
        guard !to.hasBytePrefix(from + "/"), !from.hasBytePrefix(to + "/") else {
            throw StoreError.invalidPath(to, reason: "a folder cannot move into itself or over a folder that contains it")
        }
        return kind
    }

    /// The folder part of `path`: `Books/Shelf` for `Books/Shelf/Dune.md`.
    public static func folder(of path: String) -> Substring {
        path[..<(path.lastIndex(of: "/") ?? path.startIndex)]
    }

    /// The file name part of `path`: `Dune.md` for `Books/Shelf/Dune.md`.
    public static func fileName(of path: String) -> Substring {
        path[(path.lastIndex(of: "/").map(path.index(after:)) ?? path.startIndex)...]
    }

    /// The kind of a folder below a kind's top folder (`Books/Fantasy` → book).
    private static func subfolderKind(_ folder: String) throws -> ItemKind {
        try checkComponents(of: folder)
        guard let slash = folder.firstIndex(of: "/"), let kind = ItemKind(folderName: String(folder[..<slash])) else {
            throw StoreError.invalidPath(folder, reason: "only folders inside Books/ or Notes/ can move, not the top folders themselves")
        }
        return kind
    }

    /// Rejects what no library path may be, item or plain file: absolute paths, NUL and control
    /// characters, empty, `.` or `..` components, names over ``maxNameBytes`` and paths over
    /// ``maxPathBytes``. One pass over the bytes: imports check a path for every row.
    public static func checkComponents(of path: String) throws {
        guard !path.hasBytePrefix("/") else {
            throw StoreError.invalidPath(path, reason: "paths are relative to the library root; drop the leading /")
        }
        guard path.utf8.count <= maxPathBytes else {
            throw StoreError.invalidPath(String(path.prefix(80)) + "…", reason: "the path is \(path.utf8.count) bytes, more than the \(maxPathBytes) a path may have; use shorter folder names")
        }
        var length = 0
        var dots = 0
        /// Whether the component just ended is empty, `.` or `..`.
        func endsBadComponent() -> Bool { length == 0 || (dots == length && dots <= 2) }
        for byte in path.utf8 {
            switch byte {
            case 0:
                throw StoreError.invalidPath(path, reason: "a path cannot contain a NUL character")
            case 1..<0x20, 0x7f:
                throw StoreError.invalidPath(path.debugDescription, reason: "a path cannot contain control characters (tab, newline, escape); rename it without them")
            case UInt8(ascii: "/"):
                if endsBadComponent() { throw badComponent(path) }
                length = 0
                dots = 0
            default:
                length += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
                if length > maxNameBytes {
                    throw StoreError.invalidPath(String(path.prefix(80)) + "…", reason: "a name in it is more than the \(maxNameBytes) bytes a file name may have; shorten it")
                }
            }
        }
        if endsBadComponent() { throw badComponent(path) }
    }

    private static func badComponent(_ path: String) -> StoreError {
        .invalidPath(path, reason: "empty, . and .. path components are not allowed")
    }
}
