import Foundation
import Glibc

/// One inotify instance and the pipe that wakes whoever waits on it: the one place that talks
/// to inotify, for every watcher (``FolderChangeSignal``, FuseKit's `CloseWatcher`). Both
/// descriptors are non-blocking and close-on-exec, and are closed when the queue goes.
///
/// One thread waits and reads; any thread may add watches or wake it.
public final class InotifyQueue: Sendable {
    /// One decoded `inotify_event`.
    public struct Event: Sendable, Equatable {
        /// The watch it came from (as ``addWatch(_:mask:)`` returned it); -1 for an overflow.
        public var watch: Int32
        public var mask: UInt32
        /// The name inside the watched folder; empty for an event about the folder itself.
        public var name: String

        /// The kernel's queue overflowed: events were dropped before this one.
        public var isOverflow: Bool { mask & UInt32(IN_Q_OVERFLOW) != 0 }
        /// The watch ended (its folder was removed, or the watch taken off).
        public var endsWatch: Bool { mask & UInt32(IN_IGNORED) != 0 }
    }

    /// Why ``wait(timeout:events:)`` returned.
    public enum Wake: Sendable {
        case events
        case wokenUp
        case timedOut
    }

    private let inotify: Int32
    private let wakePipe: (read: Int32, write: Int32)

    /// Fails when the user's inotify instances are used up (`fs.inotify.max_user_instances`)
    /// or no pipe can be made.
    public init() throws(SystemCallError) {
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotify >= 0 else { throw SystemCallError("start an inotify instance") }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            let error = SystemCallError("make a pipe")
            close(inotify)
            throw error
        }
        for end in ends { _ = fcntl(end, F_SETFL, O_NONBLOCK); _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        self.inotify = inotify
        wakePipe = (ends[0], ends[1])
    }

    deinit {
        for descriptor in [inotify, wakePipe.read, wakePipe.write] { close(descriptor) }
    }

    /// Watches `path` for the events in `mask`; returns the watch, or the failed call's error
    /// (`ENOENT` for a folder not there). Adding a watch on a path watched already renews it
    /// under the same watch number.
    public func addWatch(_ path: String, mask: UInt32) -> Result<Int32, SystemCallError> {
        let watch = inotify_add_watch(inotify, path, mask)
        return watch >= 0 ? .success(watch) : .failure(SystemCallError("watch \(path)"))
    }

    /// Blocks until events are queued (when `events`), ``wakeUp()`` is called, or `timeout`
    /// passes (nil: never). A wake-up is consumed; events stay queued for ``readEvents()``.
    public func wait(timeout: TimeInterval?, events: Bool = true) -> Wake {
        let deadline = timeout.map { Date().addingTimeInterval($0) }
        var descriptors = [pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
        while true {
            let milliseconds: Int32
            if let deadline {
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { return .timedOut }
                milliseconds = Int32(min(left * 1000, Double(Int32.max - 1))) + 1
            } else {
                milliseconds = -1
            }
            let ready = poll(&descriptors, events ? 2 : 1, milliseconds)
            if ready < 0 {
                guard errno == EINTR else { return .timedOut }
                continue
            }
            if descriptors[0].revents != 0 {
                var bytes = [UInt8](repeating: 0, count: 64)
                while bytes.withUnsafeMutableBytes({ read(wakePipe.read, $0.baseAddress, $0.count) }) > 0 {}
                return .wokenUp
            }
            if ready > 0 { return .events }
        }
    }

    /// Makes the waiting ``wait(timeout:events:)`` return now (or the next one, if none waits).
    public func wakeUp() {
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

    /// Every event queued now, in order; empty when none is. Read a page at a time (room for
    /// any event, whose name is at most `NAME_MAX`): a wake usually brings a few.
    public func readEvents() -> [Event] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var events: [Event] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { return events }
            buffer.withUnsafeBytes { raw in
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let header = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    offset = nameStart + Int(header.len)
                    let name = raw[nameStart..<min(offset, count)].prefix { $0 != 0 }
                    events.append(Event(watch: header.wd, mask: header.mask, name: String(decoding: name, as: UTF8.self)))
                }
            }
        }
    }
}
