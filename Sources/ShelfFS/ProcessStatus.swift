import Foundation
import Synchronization

/// A process as the mount tells its readers and writers apart: its thread group id.
typealias ProcessID = pid_t

/// What `/proc` says of a process, as the journal, `shelf unmount` and the mount need to know.
public enum ProcessStatus {
    /// True while `pid` runs; a zombie (ended, not yet reaped by its parent) has ended.
    public static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let state = stat.split(separator: ")").last?.split(separator: " ").first else { return false }
        return state != "Z" && state != "X"
    }

    /// The thread group (the process) thread `thread` belongs to; nil once it has ended.
    static func threadGroup(of thread: pid_t) -> pid_t? {
        guard let status = try? String(contentsOfFile: "/proc/\(thread)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Tgid:") }) else { return nil }
        return pid_t(line.dropFirst("Tgid:".count).trimmingCharacters(in: .whitespaces))
    }
}

/// The process of each thread that sends requests: FUSE names the calling thread, and an
/// editor reads and writes from different ones. Looked up once per thread; a thread id the
/// system reuses at worst names the wrong process for a save's base, which is then merged
/// against every served version instead.
final class RequestProcesses: Sendable {
    private static let remembered = 4_096
    private let groups = Mutex<[pid_t: pid_t]>([:])

    /// The process of thread `thread` (0: the kernel's own request, no process).
    func process(of thread: pid_t) -> ProcessID? {
        guard thread > 0 else { return nil }
        if let known = groups.withLock({ $0[thread] }) { return known }
        guard let group = ProcessStatus.threadGroup(of: thread) else { return nil }
        groups.withLock { groups in
            if groups.count >= Self.remembered { groups.removeAll(keepingCapacity: true) }
            groups[thread] = group
        }
        return group
    }
}
