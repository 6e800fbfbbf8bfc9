import Foundation
import ShelfModel
import ShelfStore

/// The one check between a cloud and the library. A cloud is written by every device that
/// shares it and carried by tools Shelf does not control, so whatever a backend delivers — a
/// batch, a snapshot, a device record — is untrusted until it passes here; the engine applies
/// nothing that did not. Paths follow the store's own rule (``ItemPath``), so what one device
/// can make every other device accepts; the other limits are stated below and in the README.
public enum CloudInputRules {
    /// The most bytes of one batch (a file or a row) a device reads into memory.
    public static let maxBatchBytes = 128 << 20
    /// The most bytes of one snapshot a device reads into memory.
    public static let maxSnapshotBytes = 1 << 30
    /// The most bytes of the cloud's other records (identity, devices, acknowledgements).
    public static let maxRecordBytes = 1 << 20
    /// The largest file a change may describe.
    public static let maxFileBytes = 1 << 32
    /// The longest title, device id, device name and item id, in bytes.
    public static let maxTitleBytes = 4096
    public static let maxDeviceIDBytes = 64
    public static let maxDeviceNameBytes = 64
    public static let maxItemIDBytes = 255
    /// The longest chain of change ids a change may name as its bases (a merge names its heads).
    public static let maxChangeIDBytes = 16 << 10
    /// Extended attributes: `user.*` only (not Shelf's own `user.shelf.*`), as Linux bounds
    /// them per attribute (XATTR_NAME_MAX, XATTR_SIZE_MAX), and at most so many per file.
    public static let maxAttributes = 100
    public static let maxAttributeNameBytes = 255
    public static let maxAttributeValueBytes = 64 << 10
    public static let maxAttributeBytes = 256 << 10
    /// Times from the year 1 to 9999: what a file system and a date formatter can hold.
    public static let times = Date(timeIntervalSince1970: -62_135_596_800)...Date(timeIntervalSince1970: 253_402_300_799)

    /// Why a batch or snapshot is not applied; says which change and what is wrong with it.
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// Throws ``Refusal`` unless every change of `batch` may be applied: each made by the
    /// batch's device in that batch (so no device speaks for another), each valid on its own.
    public static func check(_ batch: ChangeBatch) throws {
        if let unreadable = batch.unreadable { throw Refusal(reason: unreadable) }
        try require(isDeviceID(batch.device), "its device id \(quoted(batch.device)) is not one Shelf makes")
        try require(batch.number >= 1, "its number \(batch.number) is not positive")
        for (index, change) in batch.changes.enumerated() {
            try within("change \(index)") {
                try require(change.device == batch.device, "it claims to come from device \(quoted(change.device))")
                try require(change.id.hasPrefix("\(batch.device)-\(batch.number)-") && CloudChange.pushedBatch(of: change.id) != nil,
                            "its id \(quoted(change.id)) is not one of this batch's")
                try check(change)
            }
        }
    }

    /// Throws ``Refusal`` unless every change of `snapshot`, and its history, may be applied.
    public static func check(_ snapshot: CloudSnapshot) throws {
        try require(isDeviceID(snapshot.device), "its device id \(quoted(snapshot.device)) is not one Shelf makes")
        try require(snapshot.cursor.positions.keys.allSatisfy(isDeviceID), "its cursor names a device id Shelf does not make")
        for (index, change) in (snapshot.changes + (snapshot.history ?? [])).enumerated() {
            try within("change \(index)") {
                try require(isChangeID(change.id), "its id \(quoted(change.id)) is not one Shelf makes")
                try check(change)
            }
        }
    }

    /// Throws ``Refusal`` unless `change` on its own may be applied: its kind lives at its path,
    /// and its mode, size, times, title, ids and attributes are within the limits.
    static func check(_ change: CloudChange) throws {
        try require(isDeviceID(change.device), "its device id \(quoted(change.device)) is not one Shelf makes")
        for base in [change.base, change.mergedFrom].compactMap({ $0 }) {
            try require(base.utf8.count <= maxChangeIDBytes && isChangeID(base), "it names \(quoted(base)) as its base, not a change id")
        }
        try checkPath(change.path, kind: change.kind, item: change.item)
        try require(change.permissions & ~0o777 == 0,
                    "its mode \(String(change.permissions, radix: 8)) has bits beyond the permissions (setuid, setgid or sticky)")
        try require((0...maxFileBytes).contains(change.size), "its size \(change.size) is not between 0 and \(maxFileBytes) bytes")
        try require(times.contains(change.time) && times.contains(change.modified), "its times are not between the years 1 and 9999")
        try require(change.title.utf8.count <= maxTitleBytes && !change.title.utf8.contains(0),
                    "its title is longer than \(maxTitleBytes) bytes or holds a NUL character")
        try require(change.hash.isWellFormed, "its content hash \(quoted(change.hash.rawValue)) is not a SHA-256")
        try checkAttributes(change.attributes)
    }

    /// The path rule by kind: items where ``ItemPath`` puts items of their kind, plain files and
    /// folders anywhere else but the status folder, each with the key its kind has.
    private static func checkPath(_ path: String, kind: String, item: String) throws {
        do {
            switch kind {
            case PlainFileSync.fileKind, PlainFileSync.folderKind:
                try ItemPath.checkComponents(of: path)
                try require(item == PlainFileSync.key(path), "its key \(quoted(item)) is not its path's")
                let top = path.split(separator: "/", maxSplits: 1).first ?? ""
                try require(top != ".shelf", "its path \(quoted(path)) is inside .shelf/, the status folder")
                try require(ItemKind(folderName: path) == nil, "its path \(quoted(path)) is a top folder of items")
                let folder = String(ItemPath.folder(of: path)), name = ItemPath.fileName(of: path)
                try require(ItemPath.itemKind(ofFolder: folder) == nil || !ItemPath.isItemFileName(name),
                            "its path \(quoted(path)) is an item's, not a plain file's")
            default:
                guard let itemKind = ItemKind(rawValue: kind) else { throw Refusal(reason: "its kind \(quoted(kind)) is unknown") }
                try ItemPath.validate(path, for: itemKind)
                try require(!item.isEmpty && item.utf8.count <= maxItemIDBytes && !item.hasPrefix("file:")
                                && !item.utf8.contains(where: isControl),
                            "its item id \(quoted(item)) is not one Shelf makes")
            }
        } catch let error as StoreError {
            guard case .invalidPath(_, let reason) = error else { throw error }
            throw Refusal(reason: "its path \(quoted(path)) is refused: \(reason)")
        }
    }

    private static func checkAttributes(_ attributes: [String: Data]) throws {
        try require(attributes.count <= maxAttributes, "it has \(attributes.count) extended attributes, more than \(maxAttributes)")
        var total = 0
        for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
            try require(name.hasPrefix("user.") && !name.hasPrefix("user.shelf.") && name.utf8.count <= maxAttributeNameBytes
                            && !name.utf8.contains(where: isControl),
                        "its extended attribute \(quoted(name)) is not a user.* name of at most \(maxAttributeNameBytes) bytes")
            try require(value.count <= maxAttributeValueBytes,
                        "its extended attribute \(quoted(name)) is \(value.count) bytes, more than \(maxAttributeValueBytes)")
            total += name.utf8.count + value.count
        }
        try require(total <= maxAttributeBytes, "its extended attributes are \(total) bytes, more than \(maxAttributeBytes)")
    }

    // MARK: Ids and names

    /// Device ids are lower-case letters, digits and dashes (a UUID's form), and short.
    public static func isDeviceID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= maxDeviceIDBytes
            && id.utf8.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 45 }
    }

    /// A pushed change's id (`<device>-<batch>-<index>`), or a merge's (such ids joined by `~`).
    static func isChangeID(_ id: String) -> Bool {
        id.split(separator: "~", omittingEmptySubsequences: false).allSatisfy { part in
            guard let (device, _) = CloudChange.pushedBatch(of: String(part)) else { return false }
            return isDeviceID(device)
        }
    }

    /// Whether a device's name may be shown and put in conflict copies' file names: short, no
    /// `/`, no control characters. A device whose record breaks this is shown by its id.
    public static func isDeviceName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maxDeviceNameBytes && !name.contains("/")
            && !name.utf8.contains(where: isControl)
    }

    // MARK: Building blocks

    private static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7f }

    private static func require(_ condition: Bool, _ reason: @autoclosure () -> String) throws {
        guard condition else { throw Refusal(reason: reason()) }
    }

    /// Runs `body`, naming `what` (which change) in its refusal.
    private static func within(_ what: String, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let refusal as Refusal {
            throw Refusal(reason: "\(what): \(refusal.reason)")
        }
    }

    /// `text` quoted with escapes, cut short: a hostile value must not flood a status line.
    private static func quoted(_ text: String) -> String {
        let shown = text.utf8.count > 120 ? String(text.prefix(100)) + "…" : text
        return shown.debugDescription
    }
}
