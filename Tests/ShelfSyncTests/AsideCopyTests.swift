import Foundation
import ShelfModel
import ShelfStore
import Testing
import TestSupport
@testable import ShelfSync

/// Conflict copies every device makes alike (one derived id per losing edit) and retires alike.
@Suite struct AsideCopyTests {
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
        let firstEdit = try #require(try a.store.write { try $0.syncedCloudChange(of: id) })

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
}
