import Foundation
import Glibc
import Synchronization

/// Wakes a waiter when files change in some folders — a library's database (every commit of
/// any process writes its write-ahead log), a cloud folder's change logs — through inotify,
/// so background work sleeps until there is something to do. The waiter still looks now and
/// then (`fallback`): an event can be missed (a network share sends none).
public final class FolderChangeSignal: Sendable {
    /// A folder to watch, and which names in it matter.
    public struct Watch: Sendable {
        public var folder: URL
        public var matches: @Sendable (String) -> Bool

        public init(folder: URL, matches: @escaping @Sendable (String) -> Bool = { _ in true }) {
            self.folder = folder
            self.matches = matches
        }
    }

    /// nil without inotify (the user's limit of instances reached): the waiter polls.
    private let queue: InotifyQueue?
    /// How often a waiter looks when inotify is unavailable.
    static let pollingPause: TimeInterval = 0.15
    /// Watch descriptor → the watch it stands for.
    private let watches = Mutex<[Int32: Watch]>([:])

    public init() {
        queue = try? InotifyQueue()
    }

    /// Adds (or renews) a watch; a folder that does not exist yet is skipped until renewed.
    public func watch(_ watch: Watch) {
        let events = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE)
        guard case .success(let descriptor)? = queue?.addWatch(watch.folder.path, mask: events) else { return }
        watches.withLock { $0[descriptor] = watch }
    }

    /// Blocks until a watched name changes, ``wakeUp()`` is called, or `fallback` passes;
    /// after a change, until `settle` passes without another (a burst of commits — an import,
    /// a run of downloads — is one wake, not one per commit). Without inotify it cannot tell,
    /// and returns after a short pause, so the caller polls rather than spins.
    public func wait(fallback: TimeInterval, settle: TimeInterval = 0) {
        guard let queue else {
            Thread.sleep(forTimeInterval: min(fallback, Self.pollingPause))
            return
        }
        let deadline = Date().addingTimeInterval(fallback)
        while true {
            switch queue.wait(timeout: deadline.timeIntervalSinceNow) {
            case .wokenUp, .timedOut:
                return
            case .events:
                if drainEvents(of: queue).matched {
                    settleBurst(settle, queue: queue)
                    return
                }
            }
        }
    }

    /// Keeps draining events until `settle` passes without one (at most ten times `settle`).
    /// It sleeps through each `settle` rather than waking for every event: a commit writes its
    /// log in many writes, and the kernel merges their repeated events while nobody reads them.
    private func settleBurst(_ settle: TimeInterval, queue: InotifyQueue) {
        guard settle > 0 else { return }
        let limit = Date().addingTimeInterval(settle * 10)
        while Date() < limit {
            if queue.wait(timeout: settle, events: false) == .wokenUp { return }
            guard drainEvents(of: queue).any else { return }
        }
    }

    /// Makes a waiting ``wait(fallback:settle:)`` return now.
    public func wakeUp() {
        queue?.wakeUp()
    }

    /// Reads every queued event: whether there was any, and whether one was about a name that
    /// matters.
    private func drainEvents(of queue: InotifyQueue) -> (any: Bool, matched: Bool) {
        let events = queue.readEvents()
        let watches = watches.withLock { $0 }
        return (!events.isEmpty, events.contains { watches[$0.watch]?.matches($0.name) == true })
    }
}
