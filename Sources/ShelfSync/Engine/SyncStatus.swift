import Foundation
import ShelfStore

/// How sync is doing, as `shelf cloud status --json` and a mount's `/.shelf/sync.json` show it.
public struct SyncStatus: Codable, Equatable, Sendable {
    public var cloud: String
    public var device: String
    /// Whether the cloud is encrypted (this device holds its key); never the key or passphrase.
    public var encrypted: Bool
    public var online: Bool
    public var offlineSince: Date?
    /// Items changed here that the cloud has not received yet.
    public var pendingUploads: Int
    public var lastSync: Date?
    /// Items whose bytes are still in the cloud (placeholders).
    public var notDownloaded: Int
    /// Bytes of items held on this device, and the budget for them (nil: none).
    public var cacheBytes: Int
    public var cacheLimitBytes: Int?
    /// Downloads and uploads since the engine reporting this started (the mount, or none).
    public var downloads: Int
    public var uploads: Int
    /// Why the last sync failed; nil after a good one.
    public var error: String?
    /// What the last sync held back and why (changes whose ancestors or bytes a file-sync tool
    /// has not delivered yet, batches that break the cloud's rules, by device and number); nil
    /// when nothing waits.
    public var waiting: String?

    /// One line for `shelf status`.
    public var summary: String {
        let state: String
        if !online {
            state = "offline since \(offlineSince.map { ISO8601DateFormatter().string(from: $0) } ?? "?")"
        } else {
            state = error.map { "error: \($0)" } ?? "online"
        }
        return "\(cloud) as \(device), \(state), \(pendingUploads) waiting to upload, \(notDownloaded) not downloaded"
            + (waiting.map { "; held back: \($0)" } ?? "")
    }

    /// The JSON both places print: keys sorted, dates in ISO 8601.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self) + Data("\n".utf8)
    }

    public static func decoded(from json: Data) throws -> SyncStatus {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(SyncStatus.self, from: json)
    }
}

extension SyncEngine {
    /// This library's sync status; nil when it is not linked.
    public func status() throws -> SyncStatus? {
        guard let link = try store.cloudLink() else { return nil }
        return SyncStatus(cloud: link.location, device: link.deviceName, encrypted: DeviceCloudKey.isHeld(by: store),
                          online: link.offlineSince == nil,
                          offlineSince: link.offlineSince, pendingUploads: try pendingUploads(), lastSync: link.lastSync,
                          notDownloaded: try store.placeholderIDs().count, cacheBytes: try store.downloadedBytes(),
                          cacheLimitBytes: link.cacheLimit, downloads: counts.downloads.load(ordering: .relaxed),
                          uploads: counts.uploads.load(ordering: .relaxed), error: link.error, waiting: link.waiting)
    }

    /// The status as `/.shelf/sync.json` shows it: `null` when not linked.
    public func statusJSON() throws -> Data {
        try status()?.encoded() ?? Data("null\n".utf8)
    }
}

extension SyncEngine: MountSync {}
