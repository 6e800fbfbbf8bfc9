import Foundation
import Glibc
import Testing
import TestDevices
import TestSupport
import TestTraits
import ShelfModel
import ShelfStore
@testable import ShelfSync
@testable import ShelfFS

/// Sync never writes over a file a program is writing through the mount: a change from the
/// cloud waits while the file has unsaved bytes — the status says so — and merges with them
/// once they are saved. When the mount cannot tell which files are locked, every change waits.
@Suite(.serialized, .scratchFolders) struct RemoteUpdateDeferralTests {
    let devices: Devices
    let a: LibraryStore
    let engineA: SyncEngine
    let note: ItemRecord
    let b: MountableLibrary
    let engineB: SyncEngine
    var folder: TemporaryFolder { devices.folder }

    /// Device A with a shared note; device B mounted, with the note downloaded.
    init() throws {
        devices = try Devices()
        a = try devices.library("a")
        note = try a.insert(.note(Note(title: "Shared", content: "line one\nline two\n")))
        engineA = try devices.join(a, as: "a").engine
        try engineA.sync()
        b = try MountableLibrary()
        engineB = try devices.join(b.store, as: "b").engine
        try engineB.sync()
        try engineB.download(note.item.id)
    }

    /// A changes the note's first line and pushes it.
    private func changeOnA(_ firstLine: String) throws {
        let item = try #require(try a.record(id: note.item.id)).item
        var changed = try #require({ if case .note(let note) = item { note } else { nil } }())
        changed.content = changed.content.replacingOccurrences(of: "line one\n", with: firstLine + "\n")
        try a.update(.note(changed))
        try engineA.sync()
    }

    @Test func unsavedWritesThroughTheMountHoldARemoteUpdateBack() throws {
        try b.withMount(sync: engineB) { mount in
            let path = mount.path(note.path)
            let original = try mount.text(note.path)
            // A program writes the whole file and keeps it open: the mount holds the bytes
            // unsaved (its idle save is a minute away).
            let edited = original.replacingOccurrences(of: "line two\n", with: "line two\nline three from b\n")
            let close = DispatchSemaphore(value: 0)
            let writer = ProbedThread("writer") {
                let fd = open(path, O_WRONLY | O_TRUNC)
                guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                defer { Glibc.close(fd) }
                let bytes = Array(edited.utf8)
                guard write(fd, bytes, bytes.count) == bytes.count else { throw POSIXError(.EIO) }
                close.wait()
            }
            #expect(writer.waitUntilAsleep(), "the writer wrote and waits to close")
            #expect(eventually(within: .seconds(10)) { b.hasUnsavedBytes() }, "the mount holds the bytes unsaved")

            try changeOnA("line ONE from a")

            // B pulls a's change and holds it back, and says so.
            try engineB.sync()
            let waiting = try #require(try engineB.status()?.waiting, "nothing is said to wait")
            #expect(waiting.contains("changes of \(note.path) wait"), "\(waiting)")
            #expect(try b.store.record(id: note.item.id)?.text.contains("line one\n") == true, "a's change went over unsaved bytes")

            close.signal()
            try writer.finish()
            try b.waitUntilSaved()
            try engineB.sync()
            #expect(try engineB.status()?.waiting == nil)
            // Both edits are there: b's saved line and a's change, merged (in the store at once,
            // in the mount once the kernel has dropped the pages it cached).
            let merged = try #require(try b.store.record(id: note.item.id)?.text)
            #expect(merged.contains("line ONE from a\n") && merged.contains("line three from b\n"), "\(merged)")
            #expect(eventually(within: .seconds(10)) { (try? mount.text(note.path)) == merged })
        }
    }

    /// The kernel's lock table cannot be read (here: named where no file is yet), so any file
    /// may be locked: A's change waits, the status says why, and the mount keeps showing the
    /// old bytes. Once the table can be read (and lists no lock), the change goes through.
    @Test func anUnreadableLockTableHoldsEveryRemoteUpdateBack() throws {
        let lockTable = folder.child("locks").path
        try b.withMount(sync: engineB, lockTable: lockTable) { mount in
            let original = try mount.text(note.path)
            try changeOnA("line ONE from a")
            try engineB.sync()
            let waiting = try #require(try engineB.status()?.waiting, "nothing is said to wait")
            #expect(waiting.contains("cannot be read"), "\(waiting)")
            #expect(try b.store.record(id: note.item.id)?.text.contains("line one\n") == true, "a change went through unchecked")
            #expect(try mount.text(note.path) == original)

            #expect(FileManager.default.createFile(atPath: lockTable, contents: Data()))
            try engineB.sync()
            #expect(try engineB.status()?.waiting == nil)
            #expect(eventually(within: .seconds(10)) { (try? mount.text(note.path))?.contains("line ONE from a\n") == true })
        }
    }
}
