import Foundation
import Testing
import TestDevices
import TestSupport
import TestTraits
import FuseKit
import ShelfModel
import ShelfStore
@testable import ShelfSync
@testable import ShelfFS

/// A local save and a change from the cloud of the same item, at the same moment: neither
/// waits for the other's lock while holding its own, and both edits end up in the item.
@Suite(.scratchFolders) struct SaveMeetsSyncTests {
    /// Two devices sharing a folder cloud and a two-paragraph note; `here` is the one whose
    /// mount (the filesystem, driven without a kernel) saves while its sync pulls.
    struct TwoDevices {
        let devices: Devices
        let shared: any CloudBackend
        let here: LibraryStore
        let there: LibraryStore
        let note: ItemRecord

        init() throws {
            devices = try Devices()
            shared = try devices.cloud(for: "here")
            here = try devices.library("here")
            note = try here.insert(.note(Note(title: "Two hands", content: "alpha: start\n\nbeta: start\n")))
            _ = try here.insert(.note(Note(title: "Other", content: "other: start\n")))
            try devices.join(here, as: "here", downloadAll: true).sync()
            let there = try devices.device("there", downloadAll: true)
            try there.sync()
            self.there = there.store
        }

        /// Rewrites the note `id` on the other device as a whole file, and pushes it.
        func editThere(_ path: String, _ text: String) throws {
            guard let record = try there.record(atPath: path) else { throw StoreError.itemNotFound(ItemID(path)) }
            _ = try there.write { try $0.saveFile(Data(text.utf8), of: record.item.id, kind: .note, at: path, basedOn: nil,
                                                   modified: Date()) }
        }
    }

    /// The pull's transaction waits inside a download (the gate) while the mount's save of the
    /// same note waits for the store; then the download goes on. With the save holding the
    /// buffer's lock across its commit and the pull asking that lock inside its transaction,
    /// this deadlocked for good.
    @Test func aSaveWaitingForTheStoreAndAPullInsideItsTransactionBothFinish() throws {
        let devices = try TwoDevices()
        // One batch from the other device: a change the pull downloads first (the gate), then
        // the change of the note being saved here.
        try devices.editThere("Notes/Other.md", "---\ntitle: Other\n---\nother: there\n")
        try devices.editThere(devices.note.path, try #require(String(data: devices.note.content, encoding: .utf8))
            .replacingOccurrences(of: "beta: start", with: "beta: there"))
        try SyncEngine(store: devices.there, cloud: devices.shared).sync()

        let stalled = StalledCloud(devices.shared)
        defer { stalled.release() }
        let engine = SyncEngine(store: devices.here, cloud: stalled)
        let operations = try ShelfFuseOperations(store: devices.here, sync: engine)
        let fs = operations.fileSystem
        let notes = try fs.lookup(parent: InodeTable.rootInode, name: "Notes").attributes.inode.rawValue
        let inode = try fs.lookup(parent: notes, name: "Two hands.md").attributes.inode.rawValue
        let text = String(decoding: try fs.read(inode, offset: 0, size: 1 << 16), as: UTF8.self)
        let edited = Array(text.replacingOccurrences(of: "alpha: start", with: "alpha: here").utf8)
        _ = try fs.setAttributes(inode, changes: AttributeChanges(size: 0))
        _ = try fs.write(inode, offset: 0, data: edited, appending: false)

        let pull = ProbedThread("the pull") { try engine.sync() }
        try #require(stalled.waitUntilADownloadWaits(), "the pull reached the download inside its transaction")
        let save = ProbedThread("the save") { try fs.saves.save(inode) }
        #expect(save.waitUntilAsleep(), "the save waits for the store the pull holds")
        // Attributes of the file being saved answer meanwhile: no request waits for a save.
        #expect(try fs.attributes(of: inode).size == UInt64(edited.count))
        stalled.release()
        try pull.finish()
        try save.finish()

        // The change held back for the busy note comes in on the next round, merged.
        try engine.sync()
        let merged = try #require(try devices.here.record(id: devices.note.item.id))
        let body = String(decoding: merged.content, as: UTF8.self)
        #expect(body.contains("alpha: here") && body.contains("beta: there"), "\(body)")
        #expect(try devices.here.record(atPath: "Notes/Other.md").map { String(decoding: $0.content, as: UTF8.self) }?
            .contains("other: there") == true)
    }
}
