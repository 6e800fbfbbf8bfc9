import ArgumentParser
import Foundation
import ShelfModel
import ShelfStore
import ShelfSync

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Counts, invalid saves waiting to be fixed, trash, mounts.")

    @OptionGroup var library: LibraryOptions

    @Flag(help: "Print the status as one JSON object.")
    var json = false

    struct Status: Encodable {
        struct Draft: Encodable {
            var id, path: String
            var errors: [String]
        }
        var library: String
        var books: Int
        var notes: Int
        var trashed: Int
        var drafts: [Draft]
        /// Unsaved writes a mount that ended left in the journal; the next mount saves them.
        var unsavedInJournal: Int
        /// Journal entries that could not be saved, kept with why: a person decides.
        var setAside: [SetAside]
        struct SetAside: Encodable {
            var bytes, why: String
        }
        /// Bytes written to item files that were too large for an item, kept beside them.
        var tooLarge: [TooLarge]
        struct TooLarge: Encodable {
            var path: String
            var size: Int
        }
        var changeSequence: Int64
        var mountedAt: [String]
        /// Mountpoints whose mount process is gone; `shelf mount` there clears and remounts.
        var deadMounts: [String]
        var sync: String
    }

    func run() throws {
        let store = try library.open()
        let items = try store.summaries()
        let drafts = try items.filter(\.hasDraft).compactMap { summary in
            try store.record(id: summary.id).map {
                Status.Draft(id: summary.id.rawValue, path: summary.path,
                             errors: ($0.draftDiagnostics ?? []).map(\.description))
            }
        }
        let mounted = ShelfMounts.mountpoints(ofLibrary: store.folder)
        let status = Status(
            library: store.folder.path,
            books: items.filter { $0.kind == .book }.count,
            notes: items.filter { $0.kind == .note }.count,
            trashed: try store.trashedItems().count,
            drafts: drafts,
            unsavedInJournal: JournalFolder(library: store.folder).leftoverCount,
            setAside: JournalFolder(library: store.folder).setAside().map { Status.SetAside(bytes: $0.bytes, why: $0.why) },
            tooLarge: TooLargeFiles.list(plainFiles: store.plainFilesFolder).map { Status.TooLarge(path: $0.path, size: $0.size) },
            changeSequence: try store.lastSequence(),
            mountedAt: mounted,
            deadMounts: mounted.filter(ShelfMounts.isDisconnected),
            sync: try SyncStatus.of(store)?.summary ?? "not linked to a cloud copy")
        if json { return try printJSON(status) }

        print("Library: \(status.library)")
        print("Items:   \(status.books) books, \(status.notes) notes, \(status.trashed) in the trash")
        let live = status.mountedAt.filter { !status.deadMounts.contains($0) }
        print("Mounted: \(live.isEmpty ? "no" : live.joined(separator: ", "))")
        for dead in status.deadMounts {
            print("Dead:    \(dead): its mount process is gone (Transport endpoint is not connected); `shelf mount \(dead)` clears it and mounts again, saving what it left in the journal")
        }
        print("Sync:    \(status.sync)")
        if status.drafts.isEmpty {
            print("Errors:  none")
        } else {
            print("Errors:  \(status.drafts.count) file\(status.drafts.count == 1 ? "" : "s") with an invalid save (kept as written; the record stays at its last good state until a valid save):")
            for draft in status.drafts {
                print("  \(draft.path)")
                for error in draft.errors { print("    \(error)") }
            }
        }
        if status.unsavedInJournal > 0 {
            print("Unsaved: \(status.unsavedInJournal) file\(status.unsavedInJournal == 1 ? "" : "s") with writes a mount could not save before it ended; kept in the journal, saved at the next `shelf mount`")
        }
        if !status.tooLarge.isEmpty {
            print("Too large: \(status.tooLarge.count) file\(status.tooLarge.count == 1 ? "" : "s") written to an item over the \(TooLargeFiles.largestItemFile >> 20) MiB an item holds, kept as written beside it (the item keeps its last good save):")
            for file in status.tooLarge { print("  \(file.path) (\(file.size) bytes)") }
        }
        if !status.setAside.isEmpty {
            print("Set aside: \(status.setAside.count) journal entr\(status.setAside.count == 1 ? "y" : "ies") a mount could not save; the bytes are kept as written (copy them where they belong, then delete them):")
            for entry in status.setAside {
                print("  \(entry.bytes)")
                for line in entry.why.split(separator: "\n") { print("    \(line)") }
            }
        }
    }
}
