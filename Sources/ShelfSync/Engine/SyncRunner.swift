import Foundation
import Logging

/// Syncs continuously while a library is mounted (or `shelf sync --watch` runs): a round every
/// `interval`, and after a failure the next one waits longer each time (up to a minute), so
/// an unreachable cloud is retried without spinning. ``syncNow()`` asks for a round at once.
public final class SyncRunner: @unchecked Sendable {
    private let engine: SyncEngine
    private let interval: TimeInterval
    private let logger: Logger
    /// Guards the thread's state, like every worker thread's in Shelf.
    private let condition = NSCondition()
    private var isRunning = false
    private var isStopped = false
    private var isRequested = false
    private var failures = 0

    public init(engine: SyncEngine, interval: TimeInterval, logger: Logger) {
        self.engine = engine
        self.interval = interval
        self.logger = logger
    }

    public func start() {
        condition.withLock {
            guard !isRunning, !isStopped else { return }
            isRunning = true
            let thread = Thread { [self] in runUntilStopped() }
            thread.name = "shelf.sync"
            thread.start()
        }
    }

    /// Wakes the thread for a round now.
    public func syncNow() {
        condition.withLock {
            isRequested = true
            condition.broadcast()
        }
    }

    /// Stops after the round under way, then runs a last one so saves made until now reach
    /// the cloud if it can be reached.
    public func stop() {
        condition.withLock {
            isStopped = true
            condition.broadcast()
            while isRunning { condition.wait() }
        }
        round()
    }

    private func runUntilStopped() {
        repeat { round() } while waitForNextRound()
        condition.withLock {
            isRunning = false
            condition.broadcast()
        }
    }

    private func round() {
        do {
            let report = try engine.sync()
            if failures > 0 { logger.notice("the cloud at \(engine.cloud.location) can be reached again") }
            if report.pulled + report.pushed > 0 {
                logger.info("synced: \(report.pulled) changes in, \(report.pushed) out")
            }
            condition.withLock { failures = 0 }
        } catch {
            let count = condition.withLock { failures += 1; return failures }
            if count == 1 { logger.error("sync failed, retrying: \(error)") }
        }
    }

    /// Waits `interval`, or longer after failures, or until woken; false once stopped.
    private func waitForNextRound() -> Bool {
        condition.withLock {
            let delay = failures == 0 ? interval : min(60, interval * pow(2, Double(min(failures, 8))))
            let deadline = Date().addingTimeInterval(delay)
            while !isStopped && !isRequested && condition.wait(until: deadline) {}
            isRequested = false
            return !isStopped
        }
    }
}
