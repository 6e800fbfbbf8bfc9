import Foundation
import Glibc
import ShelfSystem

/// A thread a test starts to run one blocking call, which reports from `/proc` whether it is
/// asleep in the kernel: a test waits for that instead of sleeping and hoping the call got
/// there.
public final class ProbedThread: @unchecked Sendable {
    private let started = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    private var threadID: pid_t = 0
    private var failure: (any Error)?
    private let name: String

    /// Starts `body` on a thread of its own.
    public init(_ name: String, _ body: @escaping @Sendable () throws -> Void) {
        self.name = name
        let thread = Thread { [self] in
            threadID = Self.currentThreadID()
            started.signal()
            do { try body() } catch { failure = error }
            ended.signal()
        }
        thread.name = name
        thread.start()
        started.wait()
    }

    /// The kernel's id of the calling thread, from `/proc/thread-self` ("PID/task/TID").
    private static func currentThreadID() -> pid_t {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        return pid_t(link.split(separator: "/").last.flatMap { Int32($0) } ?? 0)
    }

    /// Waits until the thread sleeps in the kernel (a lock, a queue, I/O) rather than runs;
    /// false if it did not within `timeout`, or ended first.
    public func waitUntilAsleep(within timeout: Duration = .seconds(10)) -> Bool {
        eventually(within: timeout) {
            guard ended.wait(timeout: .now()) == .timedOut else {
                ended.signal()  // put back what the check took
                return false
            }
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(threadID)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let state = stat[stat.index(close, offsetBy: 2)]
            let channel = (try? String(contentsOfFile: "/proc/self/task/\(threadID)/wchan", encoding: .utf8)) ?? "0"
            return (state == "S" || state == "D") && channel != "0"
        }
    }

    /// Waits for `body` to return and rethrows what it threw; throws ``Hung`` if it has not
    /// returned within `timeout` (the thread is then left where it is stuck).
    public func finish(within timeout: Duration = .seconds(10)) throws {
        guard ended.wait(timeout: .now() + timeout.timeInterval) == .success else { throw Hung(name: name) }
        ended.signal()
        if let failure { throw failure }
    }

    public struct Hung: Error, CustomStringConvertible {
        let name: String
        public var description: String { "\(name) did not return in time: it hangs" }
    }
}
