import Foundation
import ShelfStore
import ShelfSystem

/// `shelf mount --notify`: a desktop notification (notify-send) for each invalid save,
/// conflict copy and stop of sync, so an editor's "written" is not the last word on a save
/// the library refused.
///
/// It follows the library's change feed like `shelf watch` does, on a thread of its own that
/// never touches the mount's requests. Without a session bus (a server, a boot-time mount
/// before anyone logs in) or without notify-send, it says so once in the log and stays quiet.
final class DesktopNotifier: @unchecked Sendable {
    private let store: LibraryStore
    private let worker = WorkerThread(name: "shelf.notify")
    private let environment: [String: String]
    private let notifySend: String

    /// Nil, after one log line saying why, when no notification could be shown.
    init?(store: LibraryStore, log: (String) -> Void) {
        var environment = ProcessInfo.processInfo.environment
        let path = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        guard let notifySend = path.map({ "\($0)/notify-send" }).first(where: FileManager.default.isExecutableFile(atPath:)) else {
            log("--notify: notify-send is not on PATH; install libnotify-bin to get desktop notifications")
            return nil
        }
        if environment["DBUS_SESSION_BUS_ADDRESS"]?.isEmpty ?? true {
            guard let runtime = environment["XDG_RUNTIME_DIR"], FileManager.default.fileExists(atPath: runtime + "/bus") else {
                log("--notify: no desktop session bus (DBUS_SESSION_BUS_ADDRESS and $XDG_RUNTIME_DIR/bus are missing); notifications are off, `shelf watch` shows the same events")
                return nil
            }
            environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(runtime)/bus"
        }
        self.store = store
        self.environment = environment
        self.notifySend = notifySend
    }

    /// Starts following the library on a thread of its own; runs until the process ends.
    ///
    /// The watch is made on that thread, not here: it reads the sync status through the
    /// mount's own `/.shelf/`, which only answers once the caller has started serving.
    func start() {
        worker.start { [self] in
            guard var watch = try? ChangeWatch(store: store) else { return }
            while !worker.isStopping {
                Thread.sleep(forTimeInterval: 0.5)
                guard let events = try? watch.next() else { continue }
                for event in events where [.error, .conflict, .sync].contains(event.event) { show(event) }
            }
        }
    }

    private func show(_ event: WatchEvent) {
        let title: String = switch event.event {
        case .error: "Shelf did not save \(URL(fileURLWithPath: event.path).lastPathComponent)"
        case .conflict: "Shelf made a conflict copy"
        default: "Shelf sync"
        }
        let body = [event.event == .sync ? nil : event.path, event.reason].compactMap { $0 }.joined(separator: "\n")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: notifySend)
        process.arguments = ["--app-name=Shelf", "--urgency=\(event.event == .error ? "critical" : "normal")", title, body]
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return }
        process.waitUntilExit()
    }
}
