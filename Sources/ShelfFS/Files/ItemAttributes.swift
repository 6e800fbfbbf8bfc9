import ShelfMarkdown
import ShelfStore

/// The extended attributes of item files: `user.shelf.*` describe the record and are Shelf's
/// to write; every other `user.*` attribute is the user's (KDE's `user.xdg.tags`, rsync -X) and
/// is stored with the item.
enum ItemAttributes {
    static let shelfPrefix = "user.shelf."
    /// The one `user.shelf.*` attribute a user sets: `1` keeps the item downloaded.
    static let pin = shelfPrefix + "pin"

    static func isUserSettable(_ name: String) -> Bool {
        name.hasPrefix("user.") && !name.hasPrefix(shelfPrefix)
    }

    /// SELinux labels (`security.*`) and POSIX ACLs (`system.*`) mean nothing in a library:
    /// asking for them is "not supported" on every file. `ls -l` asks each file for both, and
    /// remembers this answer for the whole mount after the first file instead of asking again.
    static func isUnsupported(_ name: String) -> Bool {
        name.hasPrefix("security.") || name.hasPrefix("system.")
    }

    /// Where an item's bytes are, as `user.shelf.download` says.
    enum Download: Equatable {
        case downloaded, notDownloaded, downloading
        /// The last download failed, for this reason.
        case error(String)

        var name: String {
            switch self {
            case .downloaded: "downloaded"
            case .notDownloaded: "not-downloaded"
            case .downloading: "downloading"
            case .error: "error"
            }
        }
    }

    /// `user.shelf.id`, `.kind`, `.version`, `.download`, `.pin`, and `.error` while an
    /// invalid save is pending or the last download failed.
    static func described(_ summary: ItemSummary, draftDiagnostics: [Diagnostic]?,
                          download: Download, isPinned: Bool) -> [String: [UInt8]] {
        var attributes = [
            shelfPrefix + "id": summary.id.rawValue,
            shelfPrefix + "kind": summary.kind.rawValue,
            shelfPrefix + "version": String(summary.version),
            shelfPrefix + "download": download.name,
            pin: isPinned ? "1" : "0",
        ]
        if let draftDiagnostics {
            attributes[shelfPrefix + "error"] = draftDiagnostics.map(\.description).joined(separator: "\n")
        } else if case .error(let reason) = download {
            attributes[shelfPrefix + "error"] = "download failed: " + reason
        }
        return attributes.mapValues { Array($0.utf8) }
    }
}
