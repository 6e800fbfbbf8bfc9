import Dispatch
import Foundation
import Synchronization

/// One background thread with the life every Shelf worker shares: started at most once and
/// never after a stop, asked to stop, and waited for. Whether a worker can hold up unmount is
/// answered here: ``stop(within:wake:)`` returns by its deadline and says whether the thread
/// ended.
///
/// The worker keeps its own state and its own way of waiting for work (a condition, a pipe, a
/// socket); its loop ends once it sees ``isStopping``, and the `wake` it hands to `stop` makes
/// a loop that waits look again. Lock order: a worker's own lock before this type's (`wake`
/// may take the worker's lock; nothing here is held while it runs).
public final class WorkerThread: Sendable {
    public let name: String
    private let phase = Mutex(Phase.idle)
    /// Signalled once when the loop returns, and again by each waiter that saw it.
    private let ended = DispatchSemaphore(value: 0)

    private enum Phase {
        case idle, running, stopping, ended
    }

    public init(name: String) {
        self.name = name
    }

    /// Runs `loop` on a new thread; false (and nothing runs) if it was started or stopped before.
    @discardableResult
    public func start(_ loop: @escaping @Sendable () -> Void) -> Bool {
        let starts = phase.withLock { phase in
            guard phase == .idle else { return false }
            phase = .running
            return true
        }
        guard starts else { return false }
        let thread = Thread { [self] in
            loop()
            phase.withLock { $0 = .ended }
            ended.signal()
        }
        thread.name = name
        thread.start()
        return true
    }

    /// Whether a stop was asked (or the loop already returned): a loop ends once it sees this.
    public var isStopping: Bool {
        phase.withLock { $0 == .stopping || $0 == .ended }
    }

    /// Whether the loop runs and has not been asked to stop: what it serves is still wanted.
    public var isServing: Bool {
        phase.withLock { $0 == .running }
    }

    /// Whether the thread was started and its loop has not returned.
    public var isRunning: Bool {
        phase.withLock { $0 == .running || $0 == .stopping }
    }

    /// Asks the loop to end, calls `wake` so a loop waiting for work looks again, and waits for
    /// the thread to end, at most `deadline` when one is given (a system call stuck in the
    /// kernel may hold it). Returns whether it ended; true for a thread never started.
    @discardableResult
    public func stop(within deadline: Duration? = nil, wake: () -> Void = {}) -> Bool {
        let neverStarted = phase.withLock { phase in
            switch phase {
            case .idle:
                phase = .ended
                return true
            case .running:
                phase = .stopping
            case .stopping, .ended:
                break
            }
            return false
        }
        if neverStarted {
            ended.signal()
            return true
        }
        wake()
        return waitUntilEnded(within: deadline)
    }

    /// Waits for the loop to return, at most `deadline`; whether it did.
    private func waitUntilEnded(within deadline: Duration?) -> Bool {
        if let deadline {
            let nanoseconds = deadline.components.seconds * 1_000_000_000 + deadline.components.attoseconds / 1_000_000_000
            guard ended.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success else { return false }
        } else {
            ended.wait()
        }
        ended.signal()  // for the next waiter
        return true
    }
}
