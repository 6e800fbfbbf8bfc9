import Foundation
import ShelfModel
import ShelfStore
import ShelfSystem
import Synchronization

/// The mount's downloads of placeholders: one download per item however many readers wait,
/// and no FUSE worker thread held while it runs — a reader's request is kept and answered
/// when the download ends, or with `EIO` once `timeout` has passed (the download goes on, and
/// the next read finds the bytes or joins it). FuseKit has few workers: fifty readers of one
/// placeholder must not stop the rest of the mount.
///
/// A download answers its readers as soon as the bytes are fetched and checked; putting them
/// in the store (parsing, indexing: most of a download's cost) follows on the filler thread,
/// many downloads to a transaction. Meanwhile reads are answered from the fetched bytes, and
/// whatever needs the store to have them (a `shelf` command, an attribute read, a write into
/// the file, unmount) has them put in place first (``fillPending(_:)``). Fetched bytes are
/// the cloud's: a crash before they are stored only leaves the item a placeholder.
final class PlaceholderDownloads: @unchecked Sendable {
    /// What the mount's sync engine does for it.
    struct Engine: Sendable {
        /// Fetches one item's bytes from the cloud, checked; nil when the item is here already.
        var fetch: @Sendable (ItemID) throws -> FetchedContent?
        /// Puts fetched bytes in place, in one transaction; returns the records they made.
        var fill: @Sendable ([FetchedContent]) throws -> [ItemRecord]
    }

    private let engine: Engine?
    private let timeout: Duration
    /// Told of the records each fill made, before their fetched bytes are let go (the mount's
    /// index learns the items are here).
    private let filled: @Sendable ([ItemRecord]) -> Void
    /// Per item being downloaded, the waiters to tell when it ends, by number.
    private let waiting = Mutex<(next: Int, byItem: [ItemID: [Int: @Sendable (Error?) -> Void]])>((0, [:]))
    private let pending = NSCondition()
    /// Fetched bytes not in the store yet, by item; guarded by `pending`.
    private var fetched: [ItemID: FetchedContent] = [:]
    /// Of those, the ones a fill has taken and not finished; guarded by `pending`.
    private var filling: Set<ItemID> = []
    private var fetchedBytes = 0
    private let worker = WorkerThread(name: "shelf.fills")
    /// When each item was last read through the mount: the cache budget evicts the others first.
    private let lastReads = Mutex<[ItemID: Date]>([:])

    /// Fetched bytes beyond which a download puts them in place itself rather than leave
    /// more to the filler (memory stays bounded however fast a program reads).
    static let pendingLimit = 32 << 20

    /// `engine` nil: the library is not linked to a cloud, so placeholders cannot be filled.
    init(engine: Engine?, timeout: Duration, filled: @escaping @Sendable ([ItemRecord]) -> Void) {
        self.engine = engine
        self.timeout = timeout
        self.filled = filled
        guard engine != nil else { return }
        worker.start { [self] in
            LinuxCalls.yieldToRequestHandlers()  // readers already have their bytes
            fillUntilStopped()
        }
    }

    /// Whether placeholders can exist here at all (the library is linked to a cloud): an
    /// unlinked mount skips every placeholder check on its reads.
    var isLinked: Bool { engine != nil }

    /// Item `id` was read through the mount now (kept only where placeholders exist).
    func noteRead(_ id: ItemID) {
        if isLinked { lastReads.withLock { $0[id] = Date() } }
    }

    /// When each item was last read through the mount.
    func readTimes() -> [ItemID: Date] {
        lastReads.withLock { $0 }
    }

    /// Whether item `id` is being downloaded now.
    func isDownloading(_ id: ItemID) -> Bool {
        waiting.withLock { $0.byItem[id] != nil }
    }

    /// How many read requests wait for a download now (for tests and the status to tell a
    /// reader that waits from one that has not asked yet).
    var waitingReaders: Int {
        waiting.withLock { $0.byItem.values.reduce(0) { $0 + $1.count } }
    }

    /// The bytes fetched for item `id` that the store does not have yet, if any.
    func fetchedContent(of id: ItemID) -> Data? {
        pending.withLock { fetched[id]?.bytes }
    }

    /// Calls `done` once, from another thread: with nil when item `id`'s bytes are here
    /// (fetched, or in the store), with the error when the download failed or `timeout`
    /// passed first.
    func whenDownloaded(_ id: ItemID, _ done: @escaping @Sendable (Error?) -> Void) {
        guard let engine else { return done(NotLinked()) }
        let (number, starts) = waiting.withLock { state -> (Int, Bool) in
            state.next += 1
            let starts = state.byItem[id] == nil
            state.byItem[id, default: [:]][state.next] = done
            return (state.next, starts)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval) { [self] in
            take(number, of: id)?(TimedOut(timeout: timeout))
        }
        guard starts else { return }
        DispatchQueue.global().async { [self] in
            var failure: Error?
            do {
                if fetchedContent(of: id) == nil, let content = try engine.fetch(id) { try keep(content) }
            } catch {
                failure = error
            }
            let waiters = waiting.withLock { $0.byItem.removeValue(forKey: id) ?? [:] }
            for waiter in waiters.values { waiter(failure) }
        }
    }

    /// Blocks until item `id`'s bytes are in the store (for a write into a placeholder, which
    /// starts from them); throws why not.
    func waitUntilDownloaded(_ id: ItemID) throws {
        let result = Mutex<Error??>(nil)
        let ended = DispatchSemaphore(value: 0)
        whenDownloaded(id) { error in
            result.withLock { $0 = .some(error) }
            ended.signal()
        }
        ended.wait()
        if let error = result.withLock({ $0 }) ?? nil { throw error }
        try fillPending([id])
    }

    /// Puts the fetched bytes of `items` (nil: of every item) in the store before returning,
    /// waiting for a fill already under way.
    func fillPending(_ items: Set<ItemID>? = nil) throws {
        let taken = pending.withLock { () -> [FetchedContent] in
            while !filling.isDisjoint(with: items ?? filling) { pending.wait() }
            return takeFetched(items)
        }
        try fill(taken)
    }

    /// Ends the filler thread and puts what it left in place (unmount).
    func stop() throws {
        worker.stop { pending.withLock { pending.broadcast() } }
        try fillPending()
    }

    /// Keeps fetched bytes for the filler; over the memory limit, puts them in place at once.
    private func keep(_ content: FetchedContent) throws {
        let overLimit = pending.withLock { () -> Bool in
            fetchedBytes += content.bytes.count - (fetched[content.id]?.bytes.count ?? 0)
            fetched[content.id] = content
            pending.broadcast()
            return fetchedBytes > Self.pendingLimit
        }
        if overLimit { try fillPending() }
    }

    /// Takes `items` (nil: all) out of the fetched bytes for a fill; call with `pending` locked.
    private func takeFetched(_ items: Set<ItemID>?) -> [FetchedContent] {
        let taken = fetched.values.filter { items?.contains($0.id) ?? true }
        filling.formUnion(taken.map(\.id))
        return taken
    }

    /// Fills `taken`, tells the mount, then lets their bytes go (a read in between finds the
    /// index already up to date and reads the store). A fill that fails keeps them fetched.
    private func fill(_ taken: [FetchedContent]) throws {
        guard !taken.isEmpty, let engine else { return }
        var stored = false
        defer {
            pending.withLock {
                for content in taken where stored {
                    discardLocked(content)
                }
                filling.subtract(taken.map(\.id))
                pending.broadcast()
            }
        }
        filled(try engine.fill(taken))
        stored = true
    }

    /// Item `id` changed in the store (a newer state from the cloud): bytes fetched for the
    /// state it replaced are not its any more.
    func discard(_ id: ItemID) {
        pending.withLock {
            if let content = fetched[id], !filling.contains(id) { discardLocked(content) }
        }
    }

    /// Lets `content` go if it is still what is fetched for its item; call with `pending` locked.
    private func discardLocked(_ content: FetchedContent) {
        guard fetched[content.id]?.hash == content.hash else { return }
        fetched[content.id] = nil
        fetchedBytes -= content.bytes.count
    }

    private func fillUntilStopped() {
        while true {
            let taken = pending.withLock { () -> [FetchedContent]? in
                while !worker.isStopping && fetched.keys.allSatisfy(filling.contains) { pending.wait() }
                return worker.isStopping ? nil : takeFetched(Set(fetched.keys.filter { !filling.contains($0) }))
            }
            guard let taken else { return }
            do {
                try fill(taken)
            } catch {
                // The bytes stay fetched (reads go on from them); the next fill tries again.
                let retry = Date().addingTimeInterval(SaveScheduler.retryDelay)
                pending.withLock { if !worker.isStopping { _ = pending.wait(until: retry) } }
            }
        }
    }

    private func take(_ number: Int, of id: ItemID) -> (@Sendable (Error?) -> Void)? {
        waiting.withLock { $0.byItem[id]?.removeValue(forKey: number) }
    }

    /// A read found item `id` a placeholder that the index did not know of yet.
    struct NotHere: Error {
        let id: ItemID
    }

    struct NotLinked: Error, CustomStringConvertible {
        var description: String { "the item's bytes are in the cloud, but this library is not linked to it any more" }
    }

    struct TimedOut: Error, CustomStringConvertible {
        let timeout: Duration
        var description: String { "the download did not finish within \(timeout); it goes on, and a later read gets the bytes" }
    }
}
