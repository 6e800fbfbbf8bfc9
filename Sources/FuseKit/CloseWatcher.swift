import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ShelfSystem

/// Tells a filesystem when a program closes a file it had open for writing on the mount.
///
/// A filesystem with stateless opens (see ``FuseOperations``, "Stateless files") is never sent
/// `open`, `flush` or `release` for existing files, so the kernel never says when a writer is
/// done with one. It does tell inotify watchers of the mount itself: the watcher watches chosen
/// folders of the mount for `IN_CLOSE_WRITE` — raised when the last descriptor of a file
/// opened for writing is closed — and reports each as the folder's inode and the file's name.
/// Reading never raises it, so readers cost nothing.
///
/// Watches are added on the watcher's own thread once the session has connected: adding one
/// looks the folder up through the mount, which a request handler must never do. So
/// ``watch(folder:)`` is safe to call from handlers; it only queues. A watch ends by itself when
/// its folder is removed; a renamed folder keeps its watch and its inode.
///
/// Events are delivered in order on the watcher's thread. If the kernel's event queue
/// overflows, ``Event/eventsLost`` is delivered instead of the events that were dropped.
public final class CloseWatcher: @unchecked Sendable {
    public enum Event: Hashable, Sendable {
        /// `name` in folder `parent` was closed by the last program holding it open for writing.
        case closed(parent: Inode, name: String)
        /// `folder` is watched from now on; a file in it closed before now was not reported.
        case watching(folder: Inode)
        /// The kernel dropped events: any file written since the last event may have been closed.
        case eventsLost
    }

    public typealias Handler = @Sendable (Event) -> Void

    private let condition = NSCondition()
    /// Folders (relative to the mount root) waiting for a watch.
    private var pendingFolders: [String] = []
    private var handler: Handler?
    private var mountpoint: String?
    private let worker = WorkerThread(name: "FuseKit.CloseWatcher")
    /// The inotify queue the thread reads while it runs; waking it picks up queued folders and
    /// drains, and ends it on stop.
    private var queue: InotifyQueue?
    /// ``drain(timeout:)`` tickets: the last one asked for, and the last one whose events were
    /// delivered.
    private var drainAsked: UInt64 = 0
    private var drainDone: UInt64 = 0

    package init() {}

    /// Sets what receives the events. Call it before the session runs; events are dropped until then.
    public func onEvent(_ handler: @escaping Handler) {
        condition.withLock { self.handler = handler }
    }

    /// Watches the files directly inside `folder`, a path relative to the mount root (`""` is
    /// the root). Safe from request handlers: the watch is added later, on the watcher's thread.
    public func watch(folder: String) {
        condition.withLock {
            guard !worker.isStopping else { return }
            pendingFolders.append(folder)
            queue?.wakeUp()
        }
    }

    /// Delivers every event the kernel has queued so far and returns once the handler has
    /// run for each; false if the thread did not get to them within `timeout` (or is not
    /// running). A close that returned before this call was queued before it, so afterwards
    /// the filesystem has heard of it: what read-your-writes across processes rests on.
    public func drain(timeout: Duration = .seconds(2)) -> Bool {
        let deadline = Date().addingTimeInterval(timeout.timeInterval)
        return condition.withLock {
            guard worker.isServing else { return false }
            drainAsked += 1
            let ticket = drainAsked
            queue?.wakeUp()
            while drainDone < ticket {
                guard condition.wait(until: deadline), !worker.isStopping else { return false }
            }
            return true
        }
    }

    /// Starts the thread; called by the session once the kernel is connected to `mountpoint`.
    /// `whenWatching` runs once the folders queued so far are watched (at once if closes
    /// cannot be watched at all).
    package func connect(mountpoint: String, whenWatching: @escaping @Sendable () -> Void) {
        let queue = condition.withLock { () -> InotifyQueue? in
            guard !worker.isStopping, !worker.isRunning, self.queue == nil else { return nil }
            do {
                self.queue = try InotifyQueue()
            } catch {
                fuseKitLogger.error("close watcher: \(error); closes are not reported, saves wait for a pause in writing")
                return nil
            }
            self.mountpoint = mountpoint
            return self.queue
        }
        guard let queue else { return whenWatching() }
        guard !worker.start({ [self] in watchUntilStopped(queue, whenWatching: whenWatching) }) else { return }
        condition.withLock { letGo() }  // stopped meanwhile: never ready
    }

    /// Stops the thread and waits (at most `timeout`) for it to end. A thread still adding a
    /// watch through a mount that no longer answers ends once the session's device is closed.
    package func stop(timeout: Duration = .seconds(2)) {
        worker.stop(within: timeout) {
            condition.withLock {
                pendingFolders.removeAll()
                queue?.wakeUp()
                condition.broadcast()
            }
        }
    }

    /// Lets go of the queue (its descriptors close with it). Called with `condition` held.
    private func letGo() {
        queue = nil
        condition.broadcast()
    }

    private func watchUntilStopped(_ queue: InotifyQueue, whenWatching: @Sendable () -> Void) {
        var folders: [Int32: Inode] = [:]
        var isFirstRound = true
        while let (mountpoint, newFolders, handler, drainTicket) = nextRound() {
            for folder in newFolders {
                if let inode = addWatch(queue, mountpoint, folder, into: &folders) { handler?(.watching(folder: inode)) }
            }
            if isFirstRound {
                isFirstRound = false
                whenWatching()
            }
            // A drain asked for is answered without waiting: the read below takes what is queued.
            if drainTicket == nil { _ = queue.wait(timeout: nil) }
            for event in decode(queue.readEvents(), folders: &folders) { handler?(event) }
            if let drainTicket {
                condition.withLock {
                    drainDone = max(drainDone, drainTicket)
                    condition.broadcast()
                }
            }
        }
        condition.withLock { letGo() }
    }

    /// The folders queued since the last round, the current handler, and the drain ticket to
    /// answer this round, if one waits; nil once stopped.
    private func nextRound() -> (String, [String], Handler?, UInt64?)? {
        condition.withLock {
            guard !worker.isStopping, let mountpoint else { return nil }
            defer { pendingFolders.removeAll() }
            return (mountpoint, pendingFolders, handler, drainAsked > drainDone ? drainAsked : nil)
        }
    }

    /// Adds a watch on `folder`; returns its inode, or nil if it could not be watched.
    private func addWatch(_ queue: InotifyQueue, _ mountpoint: String, _ folder: String,
                          into folders: inout [Int32: Inode]) -> Inode? {
        let path = folder.isEmpty ? mountpoint : mountpoint + "/" + folder
        let mask = UInt32(IN_CLOSE_WRITE) | UInt32(IN_ONLYDIR) | UInt32(IN_EXCL_UNLINK)
        // A folder queued by the `mkdir` that makes it may not be visible yet: the reply is
        // still on its way to the kernel. Wait for it a little (1 ms, doubling, 255 ms at most).
        var added = queue.addWatch(path, mask: mask)
        var pause: UInt32 = 1000
        while case .failure(let error) = added, error.code == ENOENT, pause <= 128_000 {
            usleep(pause)
            pause *= 2
            added = queue.addWatch(path, mask: mask)
        }
        var info = stat()
        let watch: Int32
        switch added {
        case .success(let added): watch = added
        case .failure(let error):
            // Gone again before its watch (a folder made and removed at once) is no error.
            if error.code != ENOENT { fuseKitLogger.warning("close watcher: \(error)") }
            return nil
        }
        guard stat(path, &info) == 0 else {
            if errno != ENOENT { fuseKitLogger.warning("close watcher: cannot look up \(path): \(Errno(errno))") }
            return nil
        }
        folders[watch] = Inode(UInt64(info.st_ino))
        return folders[watch]
    }

    /// What each inotify event means for the filesystem.
    private func decode(_ events: [InotifyQueue.Event], folders: inout [Int32: Inode]) -> [Event] {
        events.compactMap { event in
            if event.isOverflow { return .eventsLost }
            if event.endsWatch {
                folders[event.watch] = nil
                return nil
            }
            guard event.mask & UInt32(IN_CLOSE_WRITE) != 0, let parent = folders[event.watch] else { return nil }
            return .closed(parent: parent, name: event.name)
        }
    }
}
