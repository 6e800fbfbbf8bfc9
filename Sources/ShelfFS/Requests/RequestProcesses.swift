import Foundation
import ShelfSystem
import Synchronization

/// A process as the mount tells its readers and writers apart: its thread group id.
typealias ProcessID = pid_t

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
