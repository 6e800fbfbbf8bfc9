import ShelfMarkdown
import ShelfStore

/// The extended attributes of item files: `user.shelf.*` describe the record and are Shelf's
/// to write; every other `user.*` attribute is the user's (KDE's `user.xdg.tags`, rsync -X) and
/// is stored with the item.
enum ItemAttributes {
    static let shelfPrefix = "user.shelf."

    static func isUserSettable(_ name: String) -> Bool {
        name.hasPrefix("user.") && !name.hasPrefix(shelfPrefix)
    }

    /// SELinux labels (`security.*`) and POSIX ACLs (`system.*`) mean nothing in a library:
    /// asking for them is "not supported" on every file. `ls -l` asks each file for both, and
    /// remembers this answer for the whole mount after the first file instead of asking again.
    static func isUnsupported(_ name: String) -> Bool {
        name.hasPrefix("security.") || name.hasPrefix("system.")
    }

    /// `user.shelf.id`, `.kind`, `.version`, and `.error` while an invalid save is pending.
    static func described(_ summary: ItemSummary, draftDiagnostics: [Diagnostic]?) -> [String: [UInt8]] {
        var attributes = [
            shelfPrefix + "id": summary.id.rawValue,
            shelfPrefix + "kind": summary.kind.rawValue,
            shelfPrefix + "version": String(summary.version),
        ]
        if let draftDiagnostics {
            attributes[shelfPrefix + "error"] = draftDiagnostics.map(\.description).joined(separator: "\n")
        }
        return attributes.mapValues { Array($0.utf8) }
    }
}
