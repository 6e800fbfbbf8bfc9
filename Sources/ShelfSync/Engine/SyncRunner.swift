import Foundation
import Logging
import ShelfStore
import ShelfSystem

/// Syncs continuously while a library is mounted (or `shelf sync --watch` runs): a round as
/// soon as the library commits a change or a new file lands in the cloud's change folders (or
/// where the bytes a held-back change waits for will land), and
/// at least every `interval` (a cloud that cannot be watched, a missed event). After a failure
/// the next round waits longer each time (up to a minute), so an unreachable cloud is retried
/// without spinning. ``syncNow()`` asks for a round at once. Once an hour it also keeps the
/// cloud small (``SyncEngine/maintainCloud(snapshotEvery:unusedFor:)``).
public final class SyncRunner: @unchecked Sendable {
    private let engine: SyncEngine
    private let interval: TimeInterval
    private let logger: Logger
    private let worker = WorkerThread(name: "shelf.sync")
    /// Guards the rounds' state below.
    private let condition = NSCondition()
    private var isRequested = false
    private var failures = 0
    private let signal: FolderChangeSignal
    /// When the cloud was last tidied (snapshot, removals): hourly is plenty.
    private var lastMaintenance = Date.distantPast

    public init(engine: SyncEngine, interval: TimeInterval, logger: Logger) {
        self.engine = engine
        self.interval = interval
        self.logger = logger
        signal = FolderChangeSignal.library(engine.store.folder)
    }

    public func start() {
        worker.start { [self] in runUntilStopped() }
    }

    /// Wakes the thread for a round now.
    public func syncNow() {
        condition.withLock {
            isRequested = true
            condition.broadcast()
        }
        signal.wakeUp()
    }

    /// Stops after the round under way, then runs a last one so saves made until now reach
    /// the cloud if it can be reached.
    public func stop() {
        worker.stop {
            condition.withLock { condition.broadcast() }
            signal.wakeUp()
        }
        round()
    }

    private func runUntilStopped() {
        // The cloud's own word that another device pushed, where it pushes its news.
        let news = engine.cloud.watchNews { [weak self] in self?.syncNow() }
        repeat { round() } while waitForNextRound()
        news?.stop()
    }

    private func round() {
        // Device folders appear as devices join: watch each (renewing a watch costs nothing).
        for folder in engine.cloud.changeFolders { signal.watch(.init(folder: folder) { !$0.hasPrefix(".") }) }
        do {
            let report = try engine.sync()
            // Changes held back for bytes on their way are applied as soon as those arrive.
            for folder in engine.cloud.contentFolders(for: engine.awaitedContent) {
                signal.watch(.init(folder: folder) { !$0.hasPrefix(".") })
            }
            if failures > 0 { logger.notice("the cloud at \(engine.cloud.location) can be reached again") }
            if report.pulled + report.pushed > 0 {
                logger.info("synced: \(report.pulled) changes in, \(report.pushed) out")
            }
            condition.withLock { failures = 0 }
            if Date().timeIntervalSince(lastMaintenance) > 3600 {
                lastMaintenance = Date()
                try engine.maintainCloud()
            }
        } catch {
            let count = condition.withLock { failures += 1; return failures }
            if count == 1 { logger.error("sync failed, retrying: \(error)") }
        }
    }

    /// Waits for a change (at most `interval`), or after failures for the backoff, or until
    /// woken; false once stopped.
    private func waitForNextRound() -> Bool {
        let backoff: TimeInterval? = condition.withLock {
            failures == 0 ? nil : min(60, interval * pow(2, Double(min(failures, 8))))
        }
        if let backoff {
            condition.withLock {
                let deadline = Date().addingTimeInterval(backoff)
                while !worker.isStopping && !isRequested && condition.wait(until: deadline) {}
            }
        } else {
            signal.wait(fallback: interval, settle: 0.02)
        }
        return condition.withLock {
            isRequested = false
            return !worker.isStopping
        }
    }
}
