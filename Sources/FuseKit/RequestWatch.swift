import Foundation
import Logging
import ShelfSystem
import Synchronization

/// Makes a request that waits too long a visible failure instead of a silent wedge: every
/// request is registered from its arrival until its answer, and a thread looks once a second
/// for those older than `threshold`, logging each once with its operation and what it is
/// about (the filesystem's ``FuseOperations/describe(_:)``), and again when it is answered.
/// A handler stuck on a lock or the store then names itself in the log.
///
/// The log is rate-limited: a wedged mount produces a few lines a minute, with a count of
/// what was left out, not a line per stuck request.
final class RequestWatch: Sendable {
    private struct Waiting {
        let operation: StaticString
        let inode: UInt64
        let since: ContinuousClock.Instant
        var reported = false
    }

    /// Requests are spread over shards by serial number, so concurrent requests seldom meet
    /// on one lock.
    private static let shardCount = 8
    private final class Shard: Sendable {
        let waiting = Mutex<[UInt64: Waiting]>([:])
    }
    private let shards = (0..<RequestWatch.shardCount).map { _ in Shard() }
    private let nextSerial = Atomic<UInt64>(0)
    private let threshold: Duration
    private let describe: @Sendable (UInt64) -> String?
    private let report: @Sendable (String) -> Void
    /// Lines logged in the current minute, and how many were left out.
    private let budget = Mutex<(minute: Int, logged: Int, suppressed: Int)>((0, 0, 0))
    private static let linesPerMinute = 10
    /// Whether the watching thread runs; signalled to stop it, and by it once it has.
    private let worker = WorkerThread(name: "fusekit.request-watch")
    /// Signalled by ``stop()``: the thread's once-a-second wait ends at once.
    private let stopRequest = DispatchSemaphore(value: 0)

    /// `describe`: names what an inode stands for (a path); must not wait for anything.
    /// `report`: where the lines go (FuseKit's log; tests collect them).
    init(threshold: Duration = .seconds(5), describe: @escaping @Sendable (UInt64) -> String?,
         report: @escaping @Sendable (String) -> Void = { fuseKitLogger.warning("\($0)") }) {
        self.threshold = threshold
        self.describe = describe
        self.report = report
    }

    /// A request arrived; returns the ticket to ``answered(_:)`` it by.
    func arrived(_ operation: StaticString, inode: UInt64) -> UInt64 {
        let serial = nextSerial.add(1, ordering: .relaxed).newValue
        shard(of: serial).waiting.withLock {
            $0[serial] = Waiting(operation: operation, inode: inode, since: .now)
        }
        return serial
    }

    /// The request `ticket` was answered (or failed).
    func answered(_ ticket: UInt64) {
        guard let waiting = shard(of: ticket).waiting.withLock({ $0.removeValue(forKey: ticket) }), waiting.reported else { return }
        log("\(waiting.operation) of \(subject(waiting.inode)) was answered after \(Self.seconds(.now - waiting.since))")
    }

    /// Starts the watching thread.
    func start() {
        worker.start { [self] in
            while stopRequest.wait(timeout: .now() + 1) == .timedOut { reportOverdue() }
        }
    }

    /// Stops the watching thread and waits for it.
    func stop() {
        worker.stop { stopRequest.signal() }
    }

    /// Logs each request waiting longer than the threshold, once.
    func reportOverdue() {
        let now = ContinuousClock.now
        var overdue: [Waiting] = []
        for shard in shards {
            shard.waiting.withLock { waiting in
                for (serial, request) in waiting where !request.reported && now - request.since > threshold {
                    waiting[serial]?.reported = true
                    overdue.append(request)
                }
            }
        }
        for request in overdue.sorted(by: { $0.since < $1.since }) {
            log("\(request.operation) of \(subject(request.inode)) has waited \(Self.seconds(now - request.since)) for an answer; a lock or the store it needs may be held by a stuck thread")
        }
    }

    private func subject(_ inode: UInt64) -> String {
        describe(inode).map { "inode \(inode) (\($0))" } ?? "inode \(inode)"
    }

    private func log(_ line: String) {
        let minute = Int(Date().timeIntervalSince1970 / 60)
        let (allowed, leftOut) = budget.withLock { budget -> (Bool, Int) in
            var leftOut = 0
            if budget.minute != minute {
                leftOut = budget.suppressed
                budget = (minute, 0, 0)
            }
            guard budget.logged < Self.linesPerMinute else {
                budget.suppressed += 1
                return (false, leftOut)
            }
            budget.logged += 1
            return (true, leftOut)
        }
        if leftOut > 0 { report("\(leftOut) more lines about slow requests were left out last minute") }
        if allowed { report(line) }
    }

    private func shard(of serial: UInt64) -> Shard {
        shards[Int(serial % UInt64(Self.shardCount))]
    }

    private static func seconds(_ duration: Duration) -> String {
        String(format: "%.1f s", duration.timeInterval)
    }
}
