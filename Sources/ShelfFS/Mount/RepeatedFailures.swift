import Foundation
import Logging
import Synchronization

/// Logs a failure that repeats — every read of an item whose bytes cannot be fetched fails
/// alike, and the kernel tries a failed read once more — once per subject a minute at most,
/// saying how many of its failures went unlogged: a reader in a loop must not fill `mount.log`.
final class RepeatedFailures: Sendable {
    private struct Logged {
        var message: String
        var time: Date
        var unlogged: Int
    }

    private let logger: Logger
    private let interval: TimeInterval
    private let logged = Mutex<[String: Logged]>([:])
    /// Subjects remembered at most; older ones are forgotten (and logged afresh).
    private static let subjectLimit = 1000

    init(logger: Logger, interval: TimeInterval = 60) {
        self.logger = logger
        self.interval = interval
    }

    /// Logs `message` about `subject` as a warning unless the same was logged within the interval.
    func warning(_ message: String, about subject: String) {
        let now = Date()
        let line: String? = logged.withLock { logged in
            if var last = logged[subject], last.message == message, now.timeIntervalSince(last.time) < interval {
                last.unlogged += 1
                logged[subject] = last
                return nil
            }
            let unlogged = logged[subject]?.unlogged ?? 0
            if logged.count >= Self.subjectLimit { logged = logged.filter { now.timeIntervalSince($0.value.time) < interval } }
            logged[subject] = Logged(message: message, time: now, unlogged: 0)
            return unlogged > 0 ? "\(message) (\(unlogged) more failures not logged since the last line)" : message
        }
        if let line { logger.warning("\(line)") }
    }
}
