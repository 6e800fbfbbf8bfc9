import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) without libsystemd: one datagram to the socket systemd names in
/// `$NOTIFY_SOCKET` (a path, or `@name` for the abstract namespace), so a `Type=notify` unit
/// running `shelf mount --foreground` is "active" exactly when the mount exists.
/// Does nothing outside systemd.
enum SystemdNotifier {
    static func send(_ state: String) {
        guard let socketPath = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"], !socketPath.isEmpty else { return }
        var nameBytes = Array(socketPath.utf8)
        if nameBytes.first == UInt8(ascii: "@") { nameBytes[0] = 0 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard nameBytes.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: nameBytes)
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + nameBytes.count)
        let message = Array(state.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, message, message.count, Int32(MSG_NOSIGNAL), socketAddress, length)
            }
        }
    }
}
