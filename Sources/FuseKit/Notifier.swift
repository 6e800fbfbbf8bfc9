import Foundation
import ShelfSystem

/// Tells the kernel that something changed without going through the mount, so it drops its
/// cached names, attributes or pages (`fuse_lowlevel_notify_inval_inode`, `…_inval_entry`,
/// `…_delete`).
///
/// The kernel side runs on one dedicated thread fed by a queue, never inside a request
/// handler: a notification can wait for kernel locks that a running request holds, so sending
/// it from that request would deadlock. Calling the methods below from a handler (or anywhere)
/// is safe — they only queue. Identical invalidations already waiting are sent once, so bursts
/// coalesce. Before the session runs, work waits; after it ends, work is dropped.
///
/// Only invalidate what the kernel knows (inodes with a lookup count); others are answered
/// with `ENOENT` by the kernel, which the notifier ignores.
public final class Notifier: @unchecked Sendable {
    /// One thing to tell the kernel.
    public enum Invalidation: Hashable, Sendable {
        /// Drop the cached attributes and page cache of the inode.
        case content(Inode)
        /// Drop only the cached attributes (for files with open writers, whose pages must stay).
        case attributes(Inode)
        /// Drop the cached name → inode mapping (and negative entries) for `name` in `parent`.
        case entry(parent: Inode, name: String)
        /// The name was deleted: drop it and tell watchers (inotify) `child` is gone.
        case deletion(parent: Inode, child: Inode, name: String)
    }

    /// Sends one invalidation to the kernel, returning 0 or a negative errno.
    package typealias Sink = @Sendable (Invalidation) -> Int32

    private let condition = NSCondition()
    /// Queued work in arrival order; `queuedSet` mirrors it for coalescing.
    private var queue: [Invalidation] = []
    private var queuedSet: Set<Invalidation> = []
    private var sink: Sink?
    private var isSending = false
    private let worker = WorkerThread(name: "FuseKit.Notifier")

    /// A notifier that holds work until ``start(sink:)``. Tests may start it with a recording sink.
    package init() {}

    public func invalidateContent(of inode: Inode) { submit(.content(inode)) }
    public func invalidateAttributes(of inode: Inode) { submit(.attributes(inode)) }
    public func invalidateEntry(parent: Inode, name: String) { submit(.entry(parent: parent, name: name)) }
    public func notifyDeletion(parent: Inode, child: Inode, name: String) {
        submit(.deletion(parent: parent, child: child, name: name))
    }

    /// Queues `invalidation` unless the same one (or a content invalidation covering these
    /// attributes) is already waiting.
    public func submit(_ invalidation: Invalidation) {
        condition.lock()
        defer { condition.unlock() }
        guard !worker.isStopping, !isCovered(invalidation) else { return }
        queue.append(invalidation)
        queuedSet.insert(invalidation)
        condition.broadcast()
    }

    /// Blocks until everything queued so far has been sent (or dropped by shutdown), or until
    /// `timeout` passes. Returns whether the queue drained. Never call it from a handler.
    @discardableResult
    public func waitUntilIdle(timeout: Duration = .seconds(5)) -> Bool {
        let deadline = Date().addingTimeInterval(timeout.timeInterval)
        condition.lock()
        defer { condition.unlock() }
        while !(queue.isEmpty && !isSending) && !worker.isStopping {
            guard condition.wait(until: deadline) else { return false }
        }
        return true
    }

    private func isCovered(_ invalidation: Invalidation) -> Bool {
        if queuedSet.contains(invalidation) { return true }
        if case .attributes(let inode) = invalidation { return queuedSet.contains(.content(inode)) }
        return false
    }

    /// Starts the sending thread; called by the session once the kernel is connected.
    package func start(sink: @escaping Sink) {
        let connects = condition.withLock {
            guard !worker.isStopping, self.sink == nil else { return false }
            self.sink = sink
            return true
        }
        if connects { worker.start { [self] in sendUntilStopped() } }
    }

    /// Drops pending work and waits (at most `timeout`) until no notification is in flight.
    /// Returns false if one is still stuck in the kernel, in which case the session must not
    /// be freed.
    package func stop(timeout: Duration = .seconds(2)) -> Bool {
        worker.stop(within: timeout) {
            condition.withLock {
                queue.removeAll()
                queuedSet.removeAll()
                condition.broadcast()
            }
        }
    }

    private func sendUntilStopped() {
        while let (invalidation, sink) = nextInvalidation() {
            let result = sink(invalidation)
            if result != 0 && result != -ENOENT {
                fuseKitLogger.warning("kernel invalidation \(invalidation) failed: \(Errno(-result))")
            }
            condition.lock()
            isSending = false
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Waits for work; nil once stopped.
    private func nextInvalidation() -> (Invalidation, Sink)? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !worker.isStopping { condition.wait() }
        guard !worker.isStopping, let sink else { return nil }
        let invalidation = queue.removeFirst()
        queuedSet.remove(invalidation)
        isSending = true
        return (invalidation, sink)
    }
}
