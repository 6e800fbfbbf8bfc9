import Foundation
import FuseKit
import Glibc
import ShelfModel
import ShelfSystem
import Synchronization

/// Makes inotify watchers on the mount (Obsidian, VS Code, `inotifywait`) hear of changes made
/// elsewhere — another device through sync, the CLI, an import.
///
/// The kernel raises inotify events only for operations that pass through it, never for what a
/// FUSE daemon changes on its own. So this type repeats each change through the mount point
/// from its own thread, as a program would: an update is an open for writing, an allocation
/// that keeps the size and a close (`IN_MODIFY`, `IN_CLOSE_WRITE`) — not a truncate, whose
/// answered size the kernel takes even over a newer one another reader got meanwhile, leaving
/// it cutting reads short of the bytes the mount serves; a new item is a create
/// (`IN_CREATE`), a new folder a `mkdir`; a rename is a rename (`IN_MOVED_FROM`/`IN_MOVED_TO`); a delete an unlink
/// (`IN_DELETE`). The store already holds each
/// change, so the mount answers this thread's requests from the view before it — a new name
/// is "not there yet", a renamed one still at its old name — and changes nothing for them:
/// they are never taken for a user's save, pushed back, or counted as a conflict.
final class ChangeAnnouncer: @unchecked Sendable {
    enum Announcement: Hashable {
        case modified(MountPath)
        case created(MountPath, NodeKey)
        /// A folder that appeared (repeated as a `mkdir`: `IN_CREATE` with `IN_ISDIR`).
        case createdFolder(MountPath)
        case renamed(from: MountPath, to: MountPath, NodeKey)
        case deleted(MountPath, NodeKey)
    }

    /// How the mount answers this thread's lookup of a name.
    enum LookupAnswer: Equatable {
        case absent
        case node(NodeKey)
    }

    private let waitForInvalidations: @Sendable () -> Void
    private let worker = WorkerThread(name: "shelf.announcer")
    /// Guards the queue and the mount point.
    private let condition = NSCondition()
    private var queue: [Announcement] = []
    private var mountpointPath: String?
    /// The thread's kernel id, which FUSE requests carry as their pid.
    private let threadID = Atomic<Int32>(0)
    /// What the thread is doing now, for the handlers that answer it.
    private let current = Mutex<Announcement?>(nil)

    /// `waitForInvalidations`: returns once the kernel has dropped what the change made stale,
    /// so a watcher that reads the file on the event reads the new bytes.
    init(waitForInvalidations: @escaping @Sendable () -> Void) {
        self.waitForInvalidations = waitForInvalidations
    }

    func start(mountpoint: String) {
        condition.withLock { mountpointPath = mountpointPath ?? mountpoint }
        worker.start { [self] in announceUntilStopped() }
    }

    /// Stops as the mount goes away; announcements not made yet are dropped. Waits a moment
    /// at most for the one under way (its system call fails once the mount is gone).
    func stop() {
        worker.stop(within: .seconds(2)) {
            condition.withLock {
                queue.removeAll()
                condition.broadcast()
            }
        }
    }

    func announce(_ announcement: Announcement) {
        condition.withLock {
            guard !worker.isStopping, !queue.contains(announcement) else { return }
            queue.append(announcement)
            condition.broadcast()
        }
    }

    /// The announcements not made yet, oldest first.
    var queued: [Announcement] {
        condition.withLock { queue }
    }

    /// Where the mount is, once attached.
    var mountpoint: String? {
        condition.withLock { mountpointPath }
    }

    /// Whether announcements are being made (the mount is attached and not stopping).
    var isAnnouncing: Bool {
        worker.isServing
    }

    /// Whether a request comes from this thread.
    func isAnnouncing(_ pid: Int32) -> Bool {
        pid != 0 && pid == threadID.load(ordering: .relaxed)
    }

    /// The answer to this thread's lookup of `path` in the view before the change it repeats;
    /// nil: answer as for anyone.
    func lookup(_ path: MountPath) -> LookupAnswer? {
        switch current.withLock({ $0 }) {
        case .created(let created, _) where created == path: .absent
        case .createdFolder(let created) where created == path: .absent
        case .renamed(let from, _, let key) where from == path: .node(key)
        case .renamed(_, let to, _) where to == path: .absent
        case .deleted(let deleted, let key) where deleted == path: .node(key)
        default: nil
        }
    }

    /// The file or folder this thread's create (or `mkdir`) of `path` stands for.
    func createdNode(at path: MountPath) -> NodeKey? {
        switch current.withLock({ $0 }) {
        case .created(let created, let key)? where created == path: key
        case .createdFolder(let created)? where created == path: .plain(path)
        default: nil
        }
    }

    private func announceUntilStopped() {
        threadID.store(LinuxCalls.gettid(), ordering: .relaxed)
        while let (announcement, mountpoint) = next() {
            waitForInvalidations()
            current.withLock { $0 = announcement }
            perform(announcement, under: mountpoint)
            current.withLock { $0 = nil }
        }
    }

    private func next() -> (Announcement, String)? {
        condition.withLock {
            while queue.isEmpty && !worker.isStopping { condition.wait() }
            guard !worker.isStopping, let mountpoint = mountpointPath else { return nil }
            return (queue.removeFirst(), mountpoint)
        }
    }

    /// The system calls a program making the change would make; failures only mean a
    /// watcher misses an event (the file itself is already right), so they are ignored.
    private func perform(_ announcement: Announcement, under mountpoint: String) {
        switch announcement {
        case .modified(let path):
            let file = open(mountpoint + "/" + path.rawValue, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
            guard file >= 0 else { return }
            _ = LinuxCalls.fallocate(file, LinuxCalls.keepSize, 0, 1)
            close(file)
        case .created(let path, _):
            let file = open(mountpoint + "/" + path.rawValue, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
            if file >= 0 { close(file) }
        case .createdFolder(let path):
            _ = mkdir(mountpoint + "/" + path.rawValue, 0o755)
        case .renamed(let from, let to, _):
            _ = rename(mountpoint + "/" + from.rawValue, mountpoint + "/" + to.rawValue)
        case .deleted(let path, _):
            _ = unlink(mountpoint + "/" + path.rawValue)
        }
    }
}
