import ShelfModel

/// Where item files may live: `<Kind folder>/[sub folders/]<name>.md`, relative to the library
/// root. Checked on every write that sets a path, so the mount and exports never meet a path
/// they cannot show.
enum ItemPath {
    /// Throws `invalidPath` unless `path` is a valid place for an item of `kind`.
    static func validate(_ path: String, for kind: ItemKind) throws {
        let components = try checkedComponents(of: path)
        guard components.count >= 2, components[0] == kind.folderName else {
            throw StoreError.invalidPath(path, reason: "a \(kind.rawValue) lives under \(kind.folderName)/, e.g. \(kind.folderName)/Title.md")
        }
        let name = components[components.count - 1]
        guard name.hasSuffix(".md"), name.count > ".md".count else {
            throw StoreError.invalidPath(path, reason: "item files end in .md after a name, e.g. \(kind.folderName)/Title.md")
        }
        guard !name.hasPrefix(".") else {
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
        guard !to.hasPrefix(from + "/"), !from.hasPrefix(to + "/") else {
            throw StoreError.invalidPath(to, reason: "a folder cannot move into itself or over a folder that contains it")
        }
        return kind
    }

    /// The folder part of `path`: `Books/Shelf` for `Books/Shelf/Dune.md`.
    static func folder(of path: String) -> Substring {
        path[..<(path.lastIndex(of: "/") ?? path.startIndex)]
    }

    /// The file name part of `path`: `Dune.md` for `Books/Shelf/Dune.md`.
    static func fileName(of path: String) -> Substring {
        path[(path.lastIndex(of: "/").map(path.index(after:)) ?? path.startIndex)...]
    }

    /// The kind of a folder below a kind's top folder (`Books/Fantasy` → book).
    private static func subfolderKind(_ folder: String) throws -> ItemKind {
        let components = try checkedComponents(of: folder)
        guard components.count >= 2, let kind = ItemKind(folderName: String(components[0])) else {
            throw StoreError.invalidPath(folder, reason: "only folders inside Books/ or Notes/ can move, not the top folders themselves")
        }
        return kind
    }

    private static func checkedComponents(of path: String) throws -> [Substring] {
        guard !path.hasPrefix("/") else {
            throw StoreError.invalidPath(path, reason: "paths are relative to the library root; drop the leading /")
        }
        guard !path.contains("\0") else {
            throw StoreError.invalidPath(path, reason: "a path cannot contain a NUL character")
        }
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        for component in components where component.isEmpty || component == "." || component == ".." {
            throw StoreError.invalidPath(path, reason: "empty, . and .. path components are not allowed")
        }
        return components
    }
}
