import ArgumentParser
import Foundation
import ShelfMarkdown
import ShelfModel
import ShelfStore
import ShelfSync

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print what happens to the library's items as it happens, until interrupted.",
        discussion: """
            One line per event: added, updated, removed, renamed, downloaded, conflict (a \
            conflict copy appeared), error (a save that does not parse, with its lines and \
            messages) and sync (sync stopped, with why, or resumed). Changes made by any \
            process — the mount, the CLI, an import, sync from other devices — are reported, \
            coalesced per item over each moment. With --json, one object per line: event, id, \
            path, from (renames), reason (errors, conflicts, sync), device (the device \
            reporting, when linked), time.
            """)

    @OptionGroup var library: LibraryOptions

    @Flag(help: "Print one JSON object per line.")
    var json = false

    @Option(help: ArgumentHelp("Seconds between looks at the library.", valueName: "SECONDS"))
    var interval: Double = 0.2

    func run() throws {
        let store = try library.open()
        var feed = try ChangeWatch(store: store)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        while true {
            for event in try feed.next() {
                let line = json ? String(decoding: try encoder.encode(event), as: UTF8.self) : event.description
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
            Thread.sleep(forTimeInterval: interval)
        }
    }
}

/// One thing that happened to an item.
struct WatchEvent: Encodable, Equatable, CustomStringConvertible {
    enum Kind: String, Encodable { case added, updated, removed, renamed, downloaded, conflict, error, sync }
    var event: Kind
    var id: String
    var path: String
    var from: String?
    /// Why: an invalid save's diagnostics (`line 29: …`), what a conflict copy holds, why
    /// sync stopped — what a person needs without leaving the terminal.
    var reason: String?
    var device: String?
    var time: Date

    var description: String {
        "\(event.rawValue)\t\(from.map { $0 + " → " } ?? "")\(path)\(reason.map { "\t" + $0 } ?? "")"
    }
}

/// The library's change feed read as events: each look reports, per item, one event for all
/// it went through since the last look — a rename stays a rename however often the item was
/// also saved, an item added and changed is added, one added and removed is nothing.
struct ChangeWatch {
    let store: LibraryStore
    private var sequence: Int64
    /// What each item looked like at the last look, to tell a download or a new error.
    private var known: [ItemID: ItemSummary]
    /// Why sync failed at the last look (nil: it did not, or the library is not linked).
    private var syncError: String?

    /// Starts at the feed's end.
    init(store: LibraryStore) throws {
        self.store = store
        sequence = try store.lastSequence()
        known = Dictionary(uniqueKeysWithValues: try store.summaries().map { ($0.id, $0) })
        syncError = try SyncStatus.of(store)?.error
    }

    mutating func next() throws -> [WatchEvent] {
        try syncEvents() + itemEvents()
    }

    /// A `sync` event when sync stops with an error, or resumes after one.
    private mutating func syncEvents() throws -> [WatchEvent] {
        guard let status = try SyncStatus.of(store), status.error != syncError else { return [] }
        defer { syncError = status.error }
        let reason = status.error.map { "sync stopped: \($0)" } ?? "sync resumed"
        return [WatchEvent(event: .sync, id: "", path: "", reason: reason, device: status.device, time: Date())]
    }

    private mutating func itemEvents() throws -> [WatchEvent] {
        let changes = try store.changes(after: sequence, limit: 10_000)
        guard let last = changes.last else { return [] }
        sequence = last.sequence
        let device = try store.cloudLink()?.deviceName
        var order: [ItemID] = []
        var byItem: [ItemID: [Change]] = [:]
        for change in changes {
            if byItem[change.id] == nil { order.append(change.id) }
            byItem[change.id, default: []].append(change)
        }
        return try order.compactMap { id in
            guard let entries = byItem[id], let first = entries.first, let last = entries.last else { return nil }
            let before = known[id]
            let after = try store.summary(id: id)
            known[id] = after
            func event(_ kind: WatchEvent.Kind, from: String? = nil, reason: String? = nil) -> WatchEvent {
                WatchEvent(event: kind, id: id.rawValue, path: after?.path ?? last.path, from: from, reason: reason,
                           device: device, time: last.time ?? Date())
            }
            if last.kind == .removed { return first.kind == .added ? nil : event(.removed) }
            if first.kind == .added, FileNaming.isConflictCopy(after?.path ?? last.path) {
                return event(.conflict, reason: "edited on two devices at once; this copy keeps the version that did not win — merge what you need into the original and delete the copy")
            }
            if first.kind == .added { return event(.added) }
            if let from = entries.first(where: { $0.previousPath != nil })?.previousPath, from != after?.path {
                return event(.renamed, from: from)
            }
            if before?.isPlaceholder == true && after?.isPlaceholder == false { return event(.downloaded) }
            // Every invalid save is told, with its reasons, not only the first of a run.
            if after?.hasDraft == true {
                let diagnostics = try store.record(id: id)?.draftDiagnostics ?? []
                let reason = diagnostics.map(\.description).joined(separator: "; ")
                return event(.error, reason: (reason.isEmpty ? "the save does not parse" : reason)
                             + " (kept as written; the item stays at its last good save until the file is fixed)")
            }
            return event(.updated)
        }
    }
}
