/// What the names in a ``FolderCloud`` say: which are Shelf's, and the numbers in them. Anyone
/// who can write to the folder can put files there, so a name is read only by these rules.
enum FolderCloudNames {
    /// The folders Shelf makes in a cloud.
    static let folderNames: Set<String> = ["devices", "log", "content", "acks", "snapshots", "keys"]

    /// What systems and sync tools leave in any folder (`.stfolder`, `.DS_Store`,
    /// `desktop.ini`): such a folder still counts as empty.
    static func isIgnorable(_ name: String) -> Bool {
        name.hasPrefix(".") || ["desktop.ini", "Thumbs.db"].contains(name)
    }

    /// The number in `000000000042.json` (a batch's name: twelve digits); nil for every other name.
    static func batchNumber(_ name: String) -> Int64? {
        name.utf8.count == 17 ? number(name) : nil
    }

    /// The batch a file-sync tool's conflict copy stands beside: `000000000042.sync-conflict-….json`
    /// (Syncthing), `000000000042 (conflicted copy ….json` (Dropbox, Nextcloud); nil for every other name.
    static func conflictCopyOfBatch(_ name: String) -> Int64? {
        let digits = name.prefix(12)
        let rest = name.dropFirst(12)
        guard name.hasSuffix(".json"), !rest.hasPrefix(".json"), rest.hasPrefix(".sync-conflict") || rest.hasPrefix(" ("),
              digits.utf8.count == 12, digits.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(digits)
    }

    /// The number in `42.json`; nil for every other name.
    static func number(_ name: String) -> Int64? {
        guard name.hasSuffix(".json") else { return nil }
        let digits = name.dropLast(5)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(digits)
    }

    /// The batches behind, device and number in `000000000042-<device>-000000000003.json`
    /// (each number at least twelve digits).
    static func snapshotName(_ name: String) -> (Int64, DeviceID, Int64)? {
        guard name.hasSuffix(".json") else { return nil }
        let stem = name.dropLast(5)
        guard let first = stem.firstIndex(of: "-"), let last = stem.lastIndex(of: "-"), first < last,
              let behind = Int64(stem[..<first]), let number = Int64(stem[stem.index(after: last)...]) else { return nil }
        return (behind, String(stem[stem.index(after: first)..<last]), number)
    }

    /// A hash's two-character folder (`ab`), never a device's: device ids are longer.
    static func isContentPrefix(_ name: String) -> Bool {
        name.utf8.count == 2 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
