import Foundation

/// What `/proc` says of a process, as the journal, `shelf unmount` and the mount need to know.
public enum ProcessStatus {
    /// True while `pid` runs; a zombie (ended, not yet reaped by its parent) has ended.
    public static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let state = stat.split(separator: ")").last?.split(separator: " ").first else { return false }
        return state != "Z" && state != "X"
    }

    /// The thread group (the process) thread `thread` belongs to; nil once it has ended.
    public static func threadGroup(of thread: pid_t) -> pid_t? {
        guard let status = try? String(contentsOfFile: "/proc/\(thread)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Tgid:") }) else { return nil }
        return pid_t(line.dropFirst("Tgid:".count).trimmingCharacters(in: .whitespaces))
    }
}
