import Foundation
import Glibc

/// Wakes a waiter when any process commits to a library: every commit writes the database's
/// write-ahead log (`shelf.sqlite-wal`), which an inotify watch on the library folder sees.
/// An idle mount thereby sleeps instead of reading its change feed several times a second;
/// the waiter still looks now and then (`fallback`), in case an event was missed.
final class LibraryChangeSignal: @unchecked Sendable {
    private let inotify: Int32
    /// Written to by ``wakeUp()`` so a waiter returns at once (shutting down).
    private let wakePipe: (read: Int32, write: Int32)
    private let databaseName: String

    init(library: URL, databaseName: String = "shelf.sqlite") {
        self.databaseName = databaseName
        inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if inotify >= 0 {
            _ = inotify_add_watch(inotify, library.path, UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO))
        }
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

    /// Blocks until the database changes, ``wakeUp()`` is called, or `fallback` passes
    /// (at once if inotify is unavailable: the caller then polls at its own pace).
    func wait(fallback: TimeInterval) {
        guard inotify >= 0 else { return }
        var descriptors = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&descriptors, 2, Int32(fallback * 1000))
            if ready < 0 && errno == EINTR { continue }
            if descriptors[1].revents != 0 { drain(wakePipe.read) }
            if ready <= 0 || descriptors[1].revents != 0 || drainMatchingEvents() { return }
        }
    }

    /// Makes a waiting ``wait(fallback:)`` return now.
    func wakeUp() {
        var byte: UInt8 = 1
        _ = write(wakePipe.write, &byte, 1)
    }

    /// Reads every queued event; whether one was about the database's files.
    private func drainMatchingEvents() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var matched = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { return matched }
            buffer.withUnsafeBytes { raw in
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let header = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    let nameBytes = raw[nameStart..<min(count, nameStart + Int(header.len))].prefix { $0 != 0 }
                    if String(decoding: nameBytes, as: UTF8.self).hasPrefix(databaseName) { matched = true }
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
