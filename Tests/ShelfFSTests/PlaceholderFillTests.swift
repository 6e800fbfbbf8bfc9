import Foundation
import Synchronization
import Testing
import TestSupport
import TestTraits
import ShelfModel
import ShelfStore
@testable import ShelfSync
@testable import ShelfFS

/// The mount's downloads answer their readers once the bytes are fetched, and store them
/// afterwards on the filler thread: here with an engine whose fills wait for the test.
@Suite(.scratchFolders) struct PlaceholderFillTests {
    /// An engine that fetches `bytes` for any item and whose fills wait until `allow()`,
    /// recording what each fill was given and how many fills reached the gate (so a test waits
    /// for a fill to be under way instead of sleeping).
    final class GatedEngine: Sendable {
        let bytes = Data("---\ntitle: Fetched\n---\n".utf8)
        let gate = DispatchSemaphore(value: 0)
        let fills = Mutex<[[ItemID]]>([])
        let failures = Mutex(0)
        let arrivals = Mutex(0)

        var engine: PlaceholderDownloads.Engine {
            .init(fetch: { [bytes] id in FetchedContent(id: id, hash: "h-\(id.rawValue)", bytes: bytes) },
                  fill: { [self] contents in
                      arrivals.withLock { $0 += 1 }
                      gate.wait()
                      if failures.withLock({ failure in defer { failure = max(0, failure - 1) }; return failure > 0 }) {
                          throw CocoaError(.fileWriteOutOfSpace)
                      }
                      fills.withLock { $0.append(contents.map(\.id)) }
                      return []
                  })
        }

        func allow(_ count: Int = 1) { for _ in 0..<count { gate.signal() } }
        /// Waits until `count` fills in all have reached the gate.
        func waitForArrivals(_ count: Int) -> Bool { eventually(within: .seconds(10)) { arrivals.withLock { $0 } >= count } }
        var filled: [ItemID] { fills.withLock { $0.flatMap { $0 } } }
    }

    private func downloaded(_ downloads: PlaceholderDownloads, _ id: ItemID) throws {
        let ended = DispatchSemaphore(value: 0)
        let failure = Mutex<Error?>(nil)
        downloads.whenDownloaded(id) { error in
            failure.withLock { $0 = error }
            ended.signal()
        }
        try #require(ended.wait(timeout: .now() + 5) == .success, "the reader was not answered")
        if let error = failure.withLock({ $0 }) { throw error }
    }

    @Test func readersAreAnsweredBeforeTheBytesAreStored() throws {
        let gated = GatedEngine()
        let downloads = PlaceholderDownloads(engine: gated.engine, timeout: .seconds(5), filled: { _ in })
        defer { gated.allow(8); try? downloads.stop() }
        let id = ItemID("book-1")
        try downloaded(downloads, id)
        #expect(downloads.fetchedContent(of: id) == gated.bytes, "reads are answered from the fetched bytes")
        #expect(gated.filled.isEmpty, "the store does not have them yet")
        gated.allow()
        #expect(eventually(within: .seconds(10)) { downloads.fetchedContent(of: id) == nil })
        #expect(gated.filled == [id])
    }

    /// What needs the store to have the bytes (a command, an attribute read) waits for a fill
    /// already under way and stores the rest itself.
    @Test func fillingWhatIsPendingWaitsForTheFillUnderWay() throws {
        let gated = GatedEngine()
        let downloads = PlaceholderDownloads(engine: gated.engine, timeout: .seconds(5), filled: { _ in })
        defer { gated.allow(8); try? downloads.stop() }
        let first = ItemID("book-1"), second = ItemID("book-2")
        try downloaded(downloads, first)
        #expect(eventually { downloads.fetchedContent(of: first) != nil })
        try #require(gated.waitForArrivals(1), "the filler takes the first and waits at the gate")
        try downloaded(downloads, second)
        let done = Mutex(false)
        let filling = ProbedThread("fillPending") {
            try downloads.fillPending()
            done.withLock { $0 = true }
        }
        // Asleep: waiting for the fill under way (or at the gate with the second).
        #expect(filling.waitUntilAsleep())
        #expect(!done.withLock { $0 }, "it returned while a fill was still under way")
        gated.allow(2)
        try filling.finish()
        #expect(Set(gated.filled) == [first, second])
        #expect(downloads.fetchedContent(of: first) == nil && downloads.fetchedContent(of: second) == nil)
    }

    /// A fill that fails (a full disk) keeps the bytes for reads and stores them later.
    @Test func aFailedFillKeepsTheBytesAndIsTriedAgain() throws {
        let gated = GatedEngine()
        gated.failures.withLock { $0 = 1 }
        let downloads = PlaceholderDownloads(engine: gated.engine, timeout: .seconds(5), filled: { _ in })
        defer { gated.allow(8); try? downloads.stop() }
        let id = ItemID("book-1")
        try downloaded(downloads, id)
        gated.allow()
        // The filler comes back to the gate only after the failed fill has been dealt with.
        #expect(gated.waitForArrivals(2), "the failed fill is not tried again")
        #expect(downloads.fetchedContent(of: id) == gated.bytes, "the failed fill dropped the bytes")
        gated.allow()
        #expect(eventually(within: .seconds(10)) { gated.filled == [id] })
        #expect(downloads.fetchedContent(of: id) == nil)
    }
}
