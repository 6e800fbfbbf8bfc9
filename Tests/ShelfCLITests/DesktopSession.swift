import Foundation
import TestSupport

/// What a desktop session offers `notify-send`: a session bus at `$XDG_RUNTIME_DIR/bus`
/// (a private `dbus-daemon`) and a notification server on it — a small one, written with
/// Debian's python3-dbus, that records each notification it is asked to show as
/// `app|summary|body|urgency` (newlines in the body as `\n`). Both stop with ``stop()``.
final class DesktopSession {
    let runtimeFolder: String
    private let record: URL
    private let bus: Process
    private let server: Process

    private static let serverScript = #"""
        import sys, dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        record = sys.argv[2]
        class Notifications(dbus.service.Object):
            @dbus.service.method("org.freedesktop.Notifications", in_signature="susssasa{sv}i", out_signature="u")
            def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout):
                body = body.replace(chr(10), chr(92) + "n")
                with open(record, "a") as shown:
                    shown.write(f"{app}|{summary}|{body}|{int(hints.get('urgency', -1))}" + chr(10))
                return 1
            @dbus.service.method("org.freedesktop.Notifications", out_signature="as")
            def GetCapabilities(self): return ["body"]
            @dbus.service.method("org.freedesktop.Notifications", out_signature="ssss")
            def GetServerInformation(self): return ("shelf-tests", "shelf", "1", "1.2")
            @dbus.service.method("org.freedesktop.Notifications", in_signature="u")
            def CloseNotification(self, id): pass
        name = dbus.service.BusName("org.freedesktop.Notifications", bus)
        Notifications(bus, "/org/freedesktop/Notifications")
        open(record, "a").close()
        GLib.MainLoop().run()
        """#

    struct NotReady: Error, CustomStringConvertible {
        let description: String
    }

    init(in scratch: URL) throws {
        let runtime = scratch.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        runtimeFolder = runtime.path
        record = scratch.appendingPathComponent("notifications")
        let address = "unix:path=\(runtime.path)/bus"
        bus = Process()
        bus.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        bus.arguments = ["--session", "--nofork", "--nopidfile", "--address=\(address)"]
        server = Process()
        // Debian's python3, where python3-dbus lives, whatever python3 comes first on PATH.
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = ["-c", Self.serverScript, address, record.path]
        let serverLog = scratch.appendingPathComponent("notification-server.log")
        try Data().write(to: serverLog)
        bus.standardOutput = FileHandle.nullDevice
        bus.standardError = FileHandle.nullDevice
        server.standardOutput = FileHandle.nullDevice
        server.standardError = try FileHandle(forWritingTo: serverLog)
        try bus.run()
        guard eventually(within: .seconds(10), { FileManager.default.fileExists(atPath: runtime.path + "/bus") }) else {
            stop()
            throw NotReady(description: "dbus-daemon did not open \(runtime.path)/bus")
        }
        do {
            try server.run()
        } catch {
            stop()
            throw error
        }
        // The server creates the record once it owns its name on the bus.
        guard eventually(within: .seconds(10), { FileManager.default.fileExists(atPath: record.path) }) else {
            stop()
            let said = (try? String(contentsOf: serverLog, encoding: .utf8)) ?? ""
            throw NotReady(description: "the notification server did not start (python3-dbus and python3-gi installed?): \(said)")
        }
    }

    /// The notifications shown so far, oldest first.
    func shown() -> [String] {
        ((try? String(contentsOf: record, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func stop() {
        for process in [server, bus] where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
