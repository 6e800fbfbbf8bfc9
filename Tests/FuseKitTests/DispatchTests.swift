import Foundation
@testable import FuseKit
import Synchronization
import Testing
import TestTraits

/// FuseKit's request plumbing without a kernel: replies, errno mapping, the notifier queue and
/// directory batches.
@Suite(.scratchFolders) struct ReplyTests {
    /// Records what a reply delivered.
    final class Recorder<Success>: @unchecked Sendable {
        private let lock = NSLock()
        private var results: [Result<Success, Errno>] = []

        var delivered: [Result<Success, Errno>] { lock.withLock { results } }

        func reply(_ operation: StaticString = "test") -> Reply<Success> {
            Reply(operation: operation) { result in self.lock.withLock { self.results.append(result) } }
        }
    }

    struct NotFound: ErrnoConvertible { var errno: Errno { .noEntry } }
    struct Unexpected: Error {}

    @Test func deliversTheFirstAnswerOnly() throws {
        let recorder = Recorder<Int>()
        let reply = recorder.reply()
        reply.succeed(7)
        reply.fail(Errno.busy)
        #expect(recorder.delivered.count == 1)
        #expect(try recorder.delivered.first?.get() == 7)
    }

    @Test func answersEIOWhenDroppedUnanswered() {
        let recorder = Recorder<Int>()
        do { _ = recorder.reply() }
        #expect(recorder.delivered.map { $0.failure } == [Errno.ioError])
    }

    @Test func mapsThrownErrorsToTheirErrno() {
        let recorder = Recorder<Int>()
        recorder.reply().respond { throw NotFound() }
        recorder.reply().respond { throw Errno.notEmpty }
        recorder.reply().respond { throw Unexpected() }
        recorder.reply().respond { 3 }
        #expect(recorder.delivered.map { $0.failure } == [Errno.noEntry, .notEmpty, .ioError, nil])
    }
}

struct NotifierTests {
    final class Sink: @unchecked Sendable {
        private let lock = NSLock()
        private var sent: [Notifier.Invalidation] = []
        var invalidations: [Notifier.Invalidation] { lock.withLock { sent } }
        func record(_ invalidation: Notifier.Invalidation) -> Int32 {
            lock.withLock { sent.append(invalidation) }
            return 0
        }
    }

    @Test func coalescesQueuedInvalidationsInOrder() {
        let notifier = Notifier()
        let sink = Sink()
        notifier.invalidateEntry(parent: .root, name: "a.md")
        notifier.invalidateContent(of: Inode(5))
        notifier.invalidateAttributes(of: Inode(5))   // covered by the content invalidation
        notifier.invalidateEntry(parent: .root, name: "a.md")
        notifier.invalidateAttributes(of: Inode(6))
        notifier.notifyDeletion(parent: .root, child: Inode(7), name: "gone.md")
        notifier.start { sink.record($0) }
        #expect(notifier.waitUntilIdle())
        #expect(sink.invalidations == [
            .entry(parent: .root, name: "a.md"), .content(Inode(5)), .attributes(Inode(6)),
            .deletion(parent: .root, child: Inode(7), name: "gone.md"),
        ])
        #expect(notifier.stop())
    }

    @Test func dropsWorkAfterStopping() {
        let notifier = Notifier()
        let sink = Sink()
        notifier.start { sink.record($0) }
        #expect(notifier.stop())
        notifier.invalidateContent(of: Inode(9))
        #expect(notifier.waitUntilIdle(timeout: .milliseconds(200)))
        #expect(sink.invalidations.isEmpty)
    }
}

struct DirectoryListingTests {
    @Test func neverExceedsTheKernelsBuffer() {
        var listing = DirectoryListing(capacity: 200)
        var added = 0
        while listing.add(name: "entry-\(added).md", inode: Inode(UInt64(added + 2)), kind: .regular,
                          nextOffset: Int64(added + 1)) {
            added += 1
        }
        // Each entry takes 24 bytes of header plus the name, padded to 8: 40 bytes here.
        #expect(added == 5)
        #expect(listing.buffer.filled.count == 200)
        let overflowed = !listing.add(name: "x", inode: Inode(99), kind: .regular, nextOffset: 99)
        #expect(overflowed)
    }

    /// Batches are sized from these, so an entry must never be smaller.
    @Test func smallestEntrySizesAreTheSizesOfOneLetterNames() {
        var listing = DirectoryListing(capacity: 4096)
        let added = listing.add(name: "a", inode: Inode(2), kind: .regular, nextOffset: 1)
        #expect(added)
        #expect(listing.buffer.filled.count == DirectoryListing.smallestEntrySize)
        var plus = DirectoryPlusListing(capacity: 4096)
        let now = FileTime.now
        let attributes = FileAttributes(inode: Inode(2), kind: .regular, permissions: 0o644,
                                        accessTime: now, modificationTime: now, changeTime: now)
        let addedPlus = plus.add(name: "a", entry: Entry(attributes: attributes, attributeTimeout: .zero, entryTimeout: .zero),
                             nextOffset: 1)
        #expect(addedPlus)
        #expect(plus.buffer.filled.count == DirectoryPlusListing.smallestEntrySize)
    }

    /// `fuse_direntplus`: the kernel's entry (node id first, 128 bytes), then the `fuse_dirent`
    /// (inode, next offset, name length, type, name). Node id 0 means "no entry, name only".
    @Test func aNameAloneCarriesNoNodeIDButItsInodeAndType() {
        var plus = DirectoryPlusListing(capacity: 4096)
        let added = plus.addNameOnly(name: "a.md", inode: Inode(42), kind: .regular, nextOffset: 7)
        #expect(added)
        let bytes = Array(plus.buffer.filled)
        func number(at offset: Int, size: Int) -> UInt64 {
            bytes[offset..<offset + size].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        #expect(bytes.count == DirectoryPlusListing.smallestEntrySize)
        #expect(number(at: 0, size: 8) == 0, "node id")
        #expect(number(at: 128, size: 8) == 42, "the name's inode number")
        #expect(number(at: 136, size: 8) == 7, "offset of the next entry")
        #expect(number(at: 144, size: 4) == 4, "name length")
        #expect(number(at: 148, size: 4) == UInt64(DT_REG))
        #expect(String(decoding: bytes[152..<156], as: UTF8.self) == "a.md")
    }

    @Test func emptyBufferTakesNothing() {
        var listing = DirectoryPlusListing(capacity: 0)
        let entry = Entry.negative(timeout: .zero)
        let refused = !listing.add(name: "a", entry: entry, nextOffset: 1)
        #expect(refused)
        #expect(listing.isEmpty)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}

/// The request watch names requests that wait too long, once each, and within a line budget.
struct RequestWatchTests {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test func anOverdueRequestIsReportedOnceWithItsSubjectAndAgainWhenAnswered() {
        let lines = Lines()
        let watch = RequestWatch(threshold: .zero, describe: { $0 == 7 ? "Notes/Stuck.md" : nil }, report: lines.append)
        let stuck = watch.arrived("read", inode: 7)
        watch.reportOverdue()
        watch.reportOverdue()
        #expect(lines.all.count == 1)
        #expect(lines.all.first?.hasPrefix("read of inode 7 (Notes/Stuck.md) has waited") == true, "\(lines.all)")
        watch.answered(stuck)
        #expect(lines.all.count == 2)
        #expect(lines.all.last?.hasPrefix("read of inode 7 (Notes/Stuck.md) was answered after") == true, "\(lines.all)")

        let quick = watch.arrived("getattr", inode: 8)
        watch.answered(quick)
        #expect(lines.all.count == 2, "a request answered before the watch looked is not reported")
    }

    @Test func aWedgedMountLogsAFewLinesNotOneAPerRequest() {
        let lines = Lines()
        let watch = RequestWatch(threshold: .zero, describe: { _ in nil }, report: lines.append)
        for inode in 1...50 { _ = watch.arrived("lookup", inode: UInt64(inode)) }
        watch.reportOverdue()
        #expect(lines.all.count == 10, "\(lines.all.count) lines")
        #expect(lines.all.allSatisfy { $0.hasPrefix("lookup of inode ") })
    }
}
