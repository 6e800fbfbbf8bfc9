import Foundation
import ShelfModel
import ShelfStore
import Testing
import TestDevices
import TestSupport
import TestTraits
@testable import ShelfSync

/// Conflict copies every device makes alike (one derived id per losing edit) and retires alike.
@Suite(.scratchFolders) struct AsideCopyTests {
    /// b keeps a's losing edit aside, then retires that copy once a continues its line. a makes
    /// the same copy only later, before it has seen the retirement: a copy made with no base and
    /// the very bytes a concurrent delete removed is no edit, so the retirement stands everywhere
    /// (an edit beating a delete would bring the copy back for good: autosaves on two devices
    /// left two copies of the losing line).
    @Test func aCopyMadeLateOnAnotherDeviceDoesNotBringBackARetiredOne() throws {
        let devices = try Devices(delayed: true)
        let (a, b, c, id) = try devices.threeHolding("Notes/Plan.md", "one\ntwo\n")
        let now = Date()
        _ = try a.write("Notes/Plan.md", "one\na first\n", modified: now.addingTimeInterval(1))
        #expect(try a.sync().pushed == 1)
        let firstEdit = try #require(try a.store.write { try $0.ledger.syncedCloudChange(of: id) })

        // b's newer edit beats a's first, which b keeps aside.
        _ = try b.write("Notes/Plan.md", "one\nb once\n", modified: now.addingTimeInterval(2))
        try devices.deliver(only: { _, to in to == "b" })
        try b.sync()
        let copyID = ChangeApplier.asideID(of: firstEdit)
        #expect(try b.store.record(id: copyID)?.text == "one\na first\n", "b keeps a's first edit aside")

        // a continues its line, newest of all; b retires the copy of a's first edit.
        _ = try a.write("Notes/Plan.md", "one\na again\n", modified: now.addingTimeInterval(3))
        try a.sync()
        try devices.deliver(only: { _, to in to == "b" })
        try b.sync()
        #expect(try b.store.record(id: copyID) == nil, "b retired its copy")

        // a, which has seen nothing of b's, keeps its own first edit aside only now.
        try a.store.write { writer in
            _ = try writer.saveConflictCopy(Data("one\na first\n".utf8), id: copyID, kind: .note, beside: "Notes/Plan.md",
                                            time: firstEdit.time, device: "a", tag: ChangeApplier.asideTag(copyID))
        }
        #expect(try a.sync().pushed == 1, "a pushes its copy with no base: concurrent with b's retirement")
        try devices.settle(a, b, c)

        try devices.expectAgreed([a, b, c], on: "Notes/Plan.md", reading: "one\na again\n", oneCopyHolding: "one\nb once\n")
    }

    /// Both devices keep b's losing edit aside under its one derived id, and each pushes its copy.
    /// b's next edit continues that line, so a retires its copy; b's own copy, arriving right
    /// after, meets a's copy as a merge of two copies made from nothing — still no edit, so the
    /// retirement stands (it once brought the copy back on both devices for good).
    @Test func twoCopiesOfOneEditMetInACloudDoNotBringBackARetiredOne() throws {
        let devices = try Devices(delayed: true)
        let (a, b, c, now, firstEdit) = try afterBsFirstEdit(on: devices)
        let copyID = ChangeApplier.asideID(of: firstEdit)

        // a's newer edit beats b's first, which a keeps aside and pushes.
        _ = try a.write("Notes/Plan.md", "one\na once\n", modified: now.addingTimeInterval(2))
        try devices.deliver(only: { _, to in to == "a" })
        try a.sync()
        #expect(try a.store.record(id: copyID)?.text == "one\nb first\n", "a keeps b's first edit aside")

        // b, which has seen nothing of a's, keeps its first edit aside too, and continues it.
        _ = try b.write("Notes/Plan.md", "one\nb again\n", modified: now.addingTimeInterval(3))
        try b.store.write { writer in
            _ = try writer.saveConflictCopy(Data("one\nb first\n".utf8), id: copyID, kind: .note, beside: "Notes/Plan.md",
                                            time: firstEdit.time, device: "b", tag: ChangeApplier.asideTag(copyID))
        }
        #expect(try b.sync().pushed == 2, "b pushes its continuation and its copy in one batch")
        try devices.deliver(only: { _, to in to == "a" })
        try a.sync()
        #expect(try a.store.record(id: copyID) == nil, "a retired its copy: b continued what it kept")
        try devices.settle(a, b, c)

        try devices.expectAgreed([a, b, c], on: "Notes/Plan.md", reading: "one\nb again\n", oneCopyHolding: "one\na once\n")
    }

    /// Devices a, b and c holding `Notes/Plan.md`, after b pushed its first edit of it: the
    /// devices, the time the test's edits count from, and that edit.
    private func afterBsFirstEdit(on devices: Devices) throws -> (Device, Device, Device, Date, CloudChange) {
        let (a, b, c, id) = try devices.threeHolding("Notes/Plan.md", "one\ntwo\n")
        let now = Date()
        _ = try b.write("Notes/Plan.md", "one\nb first\n", modified: now.addingTimeInterval(1))
        try b.sync()
        return (a, b, c, now, try #require(try b.store.write { try $0.ledger.syncedCloudChange(of: id) }))
    }

    /// b's first edit loses to a's, and b's next edit (not pushed yet, newest of all) beats a's:
    /// the next edit stays on b's line, so the copy b keeps of its first edit in that same pull
    /// is retired there and then, as every other device retires it when the next edit arrives.
    @Test func anOwnEditThatWinsARebaseRetiresTheCopyOfTheEditItContinues() throws {
        let devices = try Devices(delayed: true)
        let (a, b, c, now, firstEdit) = try afterBsFirstEdit(on: devices)
        _ = try a.write("Notes/Plan.md", "one\na once\n", modified: now.addingTimeInterval(2))
        try a.sync()

        _ = try b.write("Notes/Plan.md", "one\nb again\n", modified: now.addingTimeInterval(3))
        try devices.deliver(only: { _, to in to == "b" })
        try b.sync()
        #expect(try b.store.record(id: ChangeApplier.asideID(of: firstEdit)) == nil,
                "b's next edit continues its first: no copy of the first is left")
        try devices.settle(a, b, c)

        try devices.expectAgreed([a, b, c], on: "Notes/Plan.md", reading: "one\nb again\n", oneCopyHolding: "one\na once\n")
    }
}
