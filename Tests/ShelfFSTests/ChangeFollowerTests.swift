import Foundation
import Testing
import ShelfModel
import ShelfStore
import TestSupport
import TestTraits
@testable import ShelfFS

/// The change follower sleeps while nothing happens and wakes when another process commits.
@Suite(.serialized, .scratchFolders) struct ChangeFollowerTests {
    @Test func anIdleFollowerSleepsAndAChangeElsewhereWakesIt() throws {
        let library = try MountableLibrary()
        try library.addNote("Plan")
        let operations = try ShelfFuseOperations(store: library.store)
        let follower = operations.follower
        follower.start()
        defer { follower.stop() }
        // Running once it has read its feed the first time; then two idle seconds are counted.
        #expect(eventually(within: .seconds(10)) { follower.feedReads.load(ordering: .relaxed) > 0 })
        let idleStart = follower.feedReads.load(ordering: .relaxed)
        Thread.sleep(forTimeInterval: 2)
        #expect(follower.feedReads.load(ordering: .relaxed) - idleStart <= 1, "an idle mount reads its feed rarely")

        let other = try library.reopened()
        let record = try #require(try other.record(atPath: "Notes/Plan.md"))
        guard case .note(var note) = record.item else { Issue.record("the sample is a note"); return }
        note.content = "Changed by another process.\n"
        try other.update(.note(note))
        let changed = try #require(try other.summary(id: record.item.id))
        #expect(eventually(within: .seconds(10)) { operations.fileSystem.parts.index.summary(id: record.item.id) == changed },
                "a commit by another process wakes the follower")
    }
}
