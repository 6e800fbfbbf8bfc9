import Foundation

/// Whether a process still runs, as the journal and `shelf unmount` need to know.
public enum ProcessStatus {
    /// True while `pid` runs; a zombie (ended, not yet reaped by its parent) has ended.
    public static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let state = stat.split(separator: ")").last?.split(separator: " ").first else { return false }
        return state != "Z" && state != "X"
    }
}
