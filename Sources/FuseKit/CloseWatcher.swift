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
    /// The write end of the pipe that wakes the thread when folders are queued or on stop.
    private var wakeDescriptor: Int32 = -1
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
            wake()
        }
    }

    /// Delivers every event the kernel has queued so far and returns once the handler has
    /// run for each; false if the thread did not get to them within `timeout` (or is not
    /// running). A close that returned before this call was queued before it, so afterwards
    /// the filesystem has heard of it: what read-your-writes across processes rests on.
    public func drain(timeout: Duration = .seconds(2)) -> Bool {
        let deadline = Date().addingTimeInterval(timeout.seconds)
        return condition.withLock {
            guard worker.isServing else { return false }
            drainAsked += 1
            let ticket = drainAsked
            wake()
            while drainDone < ticket {
                guard condition.wait(until: deadline), !worker.isStopping else { return false }
            }
            return true
        }
    }

    /// Starts the thread; called by the session once the kernel is connected to `mountpoint`.
    package func connect(mountpoint: String) {
        let wakeUp = condition.withLock { () -> Int32? in
            guard !worker.isStopping, !worker.isRunning, wakeDescriptor < 0 else { return nil }
            self.mountpoint = mountpoint
            var pipeEnds: [Int32] = [-1, -1]
            guard pipe(&pipeEnds) == 0 else {
                fuseKitLogger.error("close watcher: no pipe (\(Errno(errno))); closes are not reported")
                return nil
            }
            for end in pipeEnds { _ = fcntl(end, F_SETFL, O_NONBLOCK); _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            wakeDescriptor = pipeEnds[1]
            return pipeEnds[0]
        }
        guard let wakeUp, !worker.start({ [self] in watchUntilStopped(wakeUp: wakeUp) }) else { return }
        condition.withLock { closePipe(readEnd: wakeUp) }  // stopped meanwhile
    }

    /// Stops the thread and waits (at most `timeout`) for it to end. A thread still adding a
    /// watch through a mount that no longer answers ends once the session's device is closed.
    package func stop(timeout: Duration = .seconds(2)) {
        worker.stop(within: timeout) {
            condition.withLock {
                pendingFolders.removeAll()
                wake()
                condition.broadcast()
            }
        }
    }

    /// Closes both ends of the wake pipe. Called with `condition` held.
    private func closePipe(readEnd: Int32) {
        close(readEnd)
        close(wakeDescriptor)
        wakeDescriptor = -1
        condition.broadcast()
    }

    /// Called with `condition` held.
    private func wake() {
        guard wakeDescriptor >= 0 else { return }
        var byte: UInt8 = 1
        _ = Glibc.write(wakeDescriptor, &byte, 1)
    }

    private func watchUntilStopped(wakeUp: Int32) {
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if inotify < 0 { fuseKitLogger.error("close watcher: inotify_init1 failed: \(Errno(errno))") }
        var folders: [Int32: Inode] = [:]
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while let (mountpoint, newFolders, handler, drainTicket) = nextRound() {
            if inotify >= 0 {
                for folder in newFolders {
                    if let inode = addWatch(inotify, mountpoint, folder, into: &folders) { handler?(.watching(folder: inode)) }
                }
            }
            var descriptors = [pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
            // A drain asked for is answered without waiting: the reads below take what is queued.
            let wait: Int32 = drainTicket == nil ? -1 : 0
            guard poll(&descriptors, inotify >= 0 ? 2 : 1, wait) >= 0 || errno == EINTR else { break }
            if descriptors[0].revents != 0 { emptyPipe(wakeUp) }
            if inotify >= 0, descriptors[1].revents != 0 || drainTicket != nil {
                for event in readEvents(inotify, into: &buffer, folders: &folders) { handler?(event) }
            }
            if let drainTicket {
                condition.withLock {
                    drainDone = max(drainDone, drainTicket)
                    condition.broadcast()
                }
            }
        }
        if inotify >= 0 { close(inotify) }
        condition.withLock { closePipe(readEnd: wakeUp) }
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
    private func addWatch(_ inotify: Int32, _ mountpoint: String, _ folder: String,
                          into folders: inout [Int32: Inode]) -> Inode? {
        let path = folder.isEmpty ? mountpoint : mountpoint + "/" + folder
        let mask = UInt32(IN_CLOSE_WRITE) | UInt32(IN_ONLYDIR) | UInt32(IN_EXCL_UNLINK)
        // A folder queued by the `mkdir` that makes it may not be visible yet: the reply is
        // still on its way to the kernel. Wait for it a little (1 ms, doubling, 255 ms at most).
        var watch = inotify_add_watch(inotify, path, mask)
        var pause: UInt32 = 1000
        while watch < 0, errno == ENOENT, pause <= 128_000 {
            usleep(pause)
            pause *= 2
            watch = inotify_add_watch(inotify, path, mask)
        }
        var info = stat()
        guard watch >= 0, stat(path, &info) == 0 else {
            // Gone again before its watch (a folder made and removed at once) is no error.
            if errno != ENOENT { fuseKitLogger.warning("close watcher: cannot watch \(path): \(Errno(errno))") }
            return nil
        }
        folders[watch] = Inode(UInt64(info.st_ino))
        return folders[watch]
    }

    /// Decodes every queued `inotify_event` into what it means for the filesystem.
    private func readEvents(_ inotify: Int32, into buffer: inout [UInt8], folders: inout [Int32: Inode]) -> [Event] {
        var events: [Event] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { return events }
            buffer.withUnsafeBytes { raw in
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let header = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    offset = nameStart + Int(header.len)
                    if header.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        events.append(.eventsLost)
                    } else if header.mask & UInt32(IN_IGNORED) != 0 {
                        folders[header.wd] = nil
                    } else if header.mask & UInt32(IN_CLOSE_WRITE) != 0, let parent = folders[header.wd] {
                        let nameBytes = raw[nameStart..<min(offset, count)].prefix { $0 != 0 }
                        events.append(.closed(parent: parent, name: String(decoding: nameBytes, as: UTF8.self)))
                    }
                }
            }
        }
    }

    private func emptyPipe(_ descriptor: Int32) {
        var bytes = [UInt8](repeating: 0, count: 64)
        while bytes.withUnsafeMutableBytes({ Glibc.read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}
