import Glibc

/// A Unix-domain socket: how Shelf's processes reach each other (a mount's control socket) and
/// systemd. It keeps the calls on its descriptor — addresses, timeouts, one line each way —
/// and does not own it: whoever opens one closes it.
public struct UnixSocket: Sendable {
    public enum Kind: Sendable { case stream, datagram }

    public let descriptor: Int32

    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// A new socket (close-on-exec); `operation` says what for when it cannot be made.
    public static func open(_ kind: Kind, for operation: String) throws(SystemCallError) -> UnixSocket {
        let type = kind == .stream ? SOCK_STREAM : SOCK_DGRAM
        let descriptor = socket(AF_UNIX, Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SystemCallError(operation) }
        return UnixSocket(descriptor: descriptor)
    }

    public func close() {
        _ = Glibc.close(descriptor)
    }

    /// Connects to the socket at `address` (see ``withAddress(_:_:)``).
    public func connect(to address: UnsafePointer<sockaddr>, length: socklen_t, for operation: String) throws(SystemCallError) {
        guard Glibc.connect(descriptor, address, length) == 0 else { throw SystemCallError(operation) }
    }

    /// Listens at `address`, the socket file readable and writable by its owner only.
    public func listen(at address: UnsafePointer<sockaddr>, length: socklen_t, for operation: String) throws(SystemCallError) {
        let previous = umask(0o077)
        defer { umask(previous) }
        guard bind(descriptor, address, length) == 0, Glibc.listen(descriptor, 16) == 0 else { throw SystemCallError(operation) }
    }

    /// The next connection; nil once the socket is shut down (``shutdown()``).
    public func accept() -> UnixSocket? {
        while true {
            let connection = Glibc.accept(descriptor, nil, nil)
            if connection >= 0 { return UnixSocket(descriptor: connection) }
            guard errno == EINTR || errno == ECONNABORTED else { return nil }
        }
    }

    /// Ends reads and writes both ways: wakes a thread waiting in ``accept()``.
    public func shutdown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Sends `message` as one datagram to `address`, without waiting and whatever comes of it.
    public func sendDatagram(_ message: [UInt8], to address: UnsafePointer<sockaddr>, length: socklen_t) {
        _ = sendto(descriptor, message, message.count, Int32(MSG_NOSIGNAL), address, length)
    }

    /// Makes reads and writes that wait longer than `timeout` fail.
    public func setTimeout(_ timeout: Duration) {
        var value = timeval(tv_sec: Int(timeout.components.seconds),
                            tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    /// Sends `line` and a newline (a peer that left does not raise SIGPIPE).
    public func writeLine(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// One line (without its newline), or nil at end of stream or timeout.
    public func readLine() -> String? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count < 4096 {
            guard recv(descriptor, &byte, 1, 0) == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        return nil
    }

    /// Runs `body` with the address of the socket at `path` (a leading NUL byte names one in
    /// Linux's abstract namespace); nil, without running it, when `path` does not fit in an
    /// address (107 bytes).
    public static func withAddress<T>(_ path: [UInt8], _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> T) rethrows -> T? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        // An abstract name is exactly its bytes; a path ends at its NUL.
        let length = path.first == 0 ? MemoryLayout<sa_family_t>.size + path.count : MemoryLayout<sockaddr_un>.size
        return try withUnsafePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(length)) }
        }
    }

    /// ``withAddress(_:_:)`` for the socket `name` in `folder`, reached through
    /// `/proc/self/fd/<descriptor of folder>/name`: short whatever the folder's path.
    public static func withShortAddress<T>(inFolder folder: String, name: String,
                                           _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> T) throws -> T? {
        let directory = Glibc.open(folder, LinuxCalls.openPath | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw SystemCallError("open \(folder)") }
        defer { Glibc.close(directory) }
        return try withAddress(Array("/proc/self/fd/\(directory)/\(name)".utf8), body)
    }
}
