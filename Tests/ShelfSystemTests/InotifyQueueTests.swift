import Foundation
import Glibc
import ShelfSystem
import Testing
import TestSupport
import TestTraits

/// The one inotify reader: what it waits for, what it decodes, and the change signal built on it.
@Suite(.scratchFolders) struct InotifyQueueTests {
    let scratch: TemporaryFolder
    var folder: URL { scratch.url }

    init() throws {
        scratch = try TemporaryFolder()
    }

    @Test func aClosedFileWakesTheWaiterWithItsWatchAndName() throws {
        let queue = try InotifyQueue()
        let watch = try queue.addWatch(folder.path, mask: UInt32(IN_CLOSE_WRITE)).get()
        try Data("x".utf8).write(to: folder.appendingPathComponent("note.md"))
        #expect(queue.wait(timeout: 10) == .events)
        let events = queue.readEvents()
        #expect(events.contains { $0.watch == watch && $0.name == "note.md" && $0.mask & UInt32(IN_CLOSE_WRITE) != 0 })
        #expect(queue.readEvents().isEmpty, "read once")
    }

    @Test func aWakeUpEndsTheWaitAndIsConsumed() throws {
        let queue = try InotifyQueue()
        queue.wakeUp()
        #expect(queue.wait(timeout: 10) == .wokenUp)
        #expect(queue.wait(timeout: 0.05) == .timedOut, "the wake-up was consumed")
    }

    /// A waiter for wake-ups only (settling a burst) is not woken by events, which stay queued.
    @Test func aWaitForWakeUpsAloneLeavesEventsQueued() throws {
        let queue = try InotifyQueue()
        _ = try queue.addWatch(folder.path, mask: UInt32(IN_CREATE)).get()
        try Data().write(to: folder.appendingPathComponent("a"))
        #expect(queue.wait(timeout: 0.05, events: false) == .timedOut)
        #expect(queue.readEvents().map(\.name) == ["a"])
    }

    @Test func aRemovedFolderEndsItsWatchAndAMissingOneCannotBeWatched() throws {
        let queue = try InotifyQueue()
        let sub = folder.appendingPathComponent("sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: false)
        let watch = try queue.addWatch(sub.path, mask: UInt32(IN_CREATE)).get()
        try FileManager.default.removeItem(at: sub)
        #expect(queue.wait(timeout: 10) == .events)
        #expect(queue.readEvents().contains { $0.watch == watch && $0.endsWatch })
        guard case .failure(let error) = queue.addWatch(sub.path, mask: UInt32(IN_CREATE)) else {
            Issue.record("a missing folder was watched")
            return
        }
        #expect(error.code == ENOENT)
    }

    /// The change signal wakes for a name that matters, and sleeps through the others.
    @Test func theChangeSignalWakesOnlyForNamesThatMatter() throws {
        let signal = FolderChangeSignal()
        signal.watch(.init(folder: folder) { $0.hasSuffix(".log") })
        try Data().write(to: folder.appendingPathComponent("other.tmp"))
        let started = Date()
        signal.wait(fallback: 0.3)
        #expect(Date().timeIntervalSince(started) >= 0.3, "an unmatched name woke the waiter")

        // A waiter asleep in the signal (not still starting) is woken by a matching change.
        let waiter = ProbedThread("waiter") { signal.wait(fallback: 30) }
        #expect(waiter.waitUntilAsleep())
        try Data().write(to: folder.appendingPathComponent("changes.log"))
        try waiter.finish(within: .seconds(10))
    }
}
