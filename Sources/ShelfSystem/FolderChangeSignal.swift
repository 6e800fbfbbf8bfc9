import Foundation
import Glibc

/// Wakes a waiter when files change in some folders — a library's database (every commit of
/// any process writes its write-ahead log), a cloud folder's change logs — through inotify,
/// so background work sleeps until there is something to do. The waiter still looks now and
/// then (`fallback`): an event can be missed (a network share sends none).
public final class FolderChangeSignal: @unchecked Sendable {
    /// A folder to watch, and which names in it matter.
    public struct Watch: Sendable {
        public var folder: URL
        public var matches: @Sendable (String) -> Bool

        public init(folder: URL, matches: @escaping @Sendable (String) -> Bool = { _ in true }) {
            self.folder = folder
            self.matches = matches
        }
    }

    private let inotify: Int32
    /// How often a waiter looks when inotify is unavailable.
    static let pollingPause: TimeInterval = 0.15
    /// Written to by ``wakeUp()`` so a waiter returns at once (shutting down, asked to).
    private let wakePipe: (read: Int32, write: Int32)
    private let lock = NSLock()
    /// Watch descriptor → the watch it stands for.
    private var watches: [Int32: Watch] = [:]

    public init() {
        inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        var ends: [Int32] = [-1, -1]
        _ = pipe(&ends)
        for end in ends where end >= 0 {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakePipe = (ends[0], ends[1])
    }

    deinit {
        for descriptor in [inotify, wakePipe.read, wakePipe.write] where descriptor >= 0 { close(descriptor) }
    }

    /// Adds (or renews) a watch; a folder that does not exist yet is skipped until renewed.
    public func watch(_ watch: Watch) {
        guard inotify >= 0 else { return }
        let descriptor = inotify_add_watch(inotify, watch.folder.path, UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE))
        guard descriptor >= 0 else { return }
        lock.withLock { watches[descriptor] = watch }
    }

    /// Blocks until a watched name changes, ``wakeUp()`` is called, or `fallback` passes;
    /// after a change, until `settle` passes without another (a burst of commits — an import,
    /// a run of downloads — is one wake, not one per commit). Without inotify (the user's
    /// limit of instances reached) it cannot tell, and returns after a short pause, so the
    /// caller polls rather than spins.
    public func wait(fallback: TimeInterval, settle: TimeInterval = 0) {
        let deadline = Date().addingTimeInterval(inotify >= 0 ? fallback : min(fallback, Self.pollingPause))
        var descriptors = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return }
            let ready = poll(&descriptors, 2, Int32(left * 1000) + 1)
            if ready < 0 && errno == EINTR { continue }
            if descriptors[1].revents != 0 {
                drain(wakePipe.read)
                return
            }
            if ready <= 0 { return }
            if drainEvents().matched {
                settleBurst(settle, descriptors: &descriptors)
                return
            }
        }
    }

    /// Keeps draining events until `settle` passes without one (at most ten times `settle`).
    /// It sleeps through each `settle` rather than waking for every event: a commit writes its
    /// log in many writes, and the kernel merges their repeated events while nobody reads them.
    private func settleBurst(_ settle: TimeInterval, descriptors: inout [pollfd]) {
        guard settle > 0 else { return }
        let limit = Date().addingTimeInterval(settle * 10)
        while Date() < limit {
            if poll(&descriptors[1], 1, Int32(settle * 1000)) > 0 { return }
            guard drainEvents().any else { return }
        }
    }

    /// Makes a waiting ``wait(fallback:)`` return now.
    public func wakeUp() {
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

    /// Reads every queued event: whether there was any, and whether one was about a name that
    /// matters.
    private func drainEvents() -> (any: Bool, matched: Bool) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var any = false
        var matched = false
        let watches = lock.withLock { self.watches }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { return (any, matched) }
            any = true
            buffer.withUnsafeBytes { raw in
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let header = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    let nameBytes = raw[nameStart..<min(count, nameStart + Int(header.len))].prefix { $0 != 0 }
                    if watches[header.wd]?.matches(String(decoding: nameBytes, as: UTF8.self)) == true { matched = true }
                    offset = nameStart + Int(header.len)
                }
            }
        }
    }

    private func drain(_ descriptor: Int32) {
        var bytes = [UInt8](repeating: 0, count: 64)
        while bytes.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}
