import Foundation
import ShelfSystem

/// sd_notify(3) without libsystemd: one datagram to the socket systemd names in
/// `$NOTIFY_SOCKET` (a path, or `@name` for the abstract namespace), so a `Type=notify` unit
/// running `shelf mount --foreground` is "active" exactly when the mount exists.
/// Does nothing outside systemd.
enum SystemdNotifier {
    static func send(_ state: String) {
        guard let socketPath = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"], !socketPath.isEmpty else { return }
        var name = Array(socketPath.utf8)
        if name.first == UInt8(ascii: "@") { name[0] = 0 }
        guard let socket = try? UnixSocket.open(.datagram, for: "notify systemd") else { return }
        defer { socket.close() }
        _ = UnixSocket.withAddress(name) { address, length in
            socket.sendDatagram(Array(state.utf8), to: address, length: length)
        }
    }
}
