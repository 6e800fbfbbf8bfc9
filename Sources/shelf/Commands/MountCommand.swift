import ArgumentParser
import Foundation
import FuseKit
import Logging
import ShelfFS
import ShelfStore
import ShelfSync
import ShelfSystem

struct MountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount",
        abstract: "Mount the library as a folder of Markdown files.",
        discussion: """
            Without --foreground the mount runs in the background and this command returns once \
            the folder answers; its log is <library>/logs/mount.log. Unmount with `shelf unmount \
            MOUNTPOINT` (or `fusermount3 -u`); pending saves are committed first. A mount whose \
            process died (the folder answers "Transport endpoint is not connected") is cleared \
            and mounted again, its unsaved writes replayed from the journal. With --foreground \
            the mount logs `mounted` and `unmounted` lines and tells systemd when it is ready \
            (Type=notify).
            """)

    @OptionGroup var library: LibraryOptions

    @Argument(help: "An empty folder to mount on.")
    var mountpoint: String

    @Flag(help: "Stay attached; Ctrl-C or SIGTERM commits pending saves and unmounts.")
    var foreground = false

    @Flag(help: "Let other users see the mount (non-root users need user_allow_other in /etc/fuse.conf).")
    var allowOther = false

    @Flag(help: "Show a desktop notification (notify-send) for an invalid save, a conflict copy or a stop of sync.")
    var notify = false

    @Flag(help: "Log every FUSE request (libfuse's trace) to the log.")
    var debug = false

    @Option(help: ArgumentHelp("Seconds between sync rounds of a linked library when nothing wakes it sooner (a commit, a new file in a cloud folder that can be watched).", valueName: "SECONDS"))
    var pollInterval: Double = 2

    @Option(help: ArgumentHelp("How long a read of a not-downloaded file waits before it fails with EIO (`10` or `10s`).",
                               valueName: "SECONDS"))
    var downloadTimeout: Seconds = Seconds(10)

    func run() throws {
        let path = URL(fileURLWithPath: mountpoint).standardizedFileURL.path
        // Before the library is opened: opening commits pending saves through a live mount,
        // and a dead one would only answer ENOTCONN.
        try ShelfMounts.clearForMount(path)
        let store = try library.open()
        if foreground {
            // SHELF_LOG_LEVEL=debug: every sync resolution and conflict in the mount's log.
            let level = ProcessInfo.processInfo.environment["SHELF_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            // A linked library syncs while it is mounted; what a round brings reaches the mount
            // through the store's change feed like any other process's changes.
            let engine = try SyncEngine.linked(store)
            let mount = try ShelfMount(store: store, mountpoint: path, sync: engine,
                                       options: ShelfMount.Options(allowOther: allowOther, debug: debug,
                                                                   downloadTimeout: .milliseconds(Int64(downloadTimeout.value * 1000))))
            let rounds = engine.map { SyncRunner(engine: $0, interval: pollInterval, logger: Logger(label: "shelf.sync")) }
            if notify { DesktopNotifier(store: store, log: Self.log)?.start() }
            defer {
                SystemdNotifier.send("STOPPING=1")
                Self.log("unmounted \(path)")
            }
            rounds?.start()
            defer { rounds?.stop() }
            // Ready for systemd (Type=notify), for the background mount's parent and for people
            // once the mount is set up; an unmount before that can be refused as busy.
            let mounted = Self.mountedLine(library: store.folder.path, mountpoint: path)
            try mount.run {
                Self.log(mounted)
                SystemdNotifier.send("READY=1\nSTATUS=Mounted \(store.folder.path) at \(path)")
            }
        } else {
            try mountInBackground(store: store, mountpoint: path)
        }
    }

    /// Starts `shelf mount --foreground` as a detached daemon (its own session, output to the
    /// log) and waits until the mount answers or the daemon exits with its one-line error.
    ///
    /// A fresh process rather than `fork()`: forking a process that already runs Swift and
    /// Foundation threads is unsafe.
    private func mountInBackground(store: LibraryStore, mountpoint path: String) throws {
        try FileManager.default.createDirectory(at: store.layout.logs, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let log = store.layout.mountLog
        let logStart = (try? FileManager.default.attributesOfItem(atPath: log.path)[.size] as? Int) ?? 0

        var arguments = ["mount", "--foreground", "--library", store.folder.path, path]
        if allowOther { arguments.append("--allow-other") }
        if debug { arguments.append("--debug") }
        if notify { arguments.append("--notify") }
        arguments += ["--poll-interval", String(pollInterval), "--download-timeout", String(downloadTimeout.value)]
        let executable = DetachedProcess.currentExecutable
        let daemon: DetachedProcess
        do throws(SystemCallError) {
            daemon = try DetachedProcess.spawn(executable: executable, arguments: arguments, log: log.path)
        } catch {
            throw CLIError("could not start the mount process \(executable): \(SystemCallError.reason(of: error.code))")
        }

        // A loaded machine, or a cloud slow to answer its first question, can keep a daemon that
        // is alive from mounting for a while: it is waited for, and said to be waited for.
        let started = ContinuousClock.now
        var toldWaiting = false
        while ContinuousClock.now < started + Self.mountWait {
            if !toldWaiting, ContinuousClock.now > started + .seconds(10) {
                FileHandle.standardError.write(Data("Still mounting \(store.folder.path) (log: \(log.path))…\n".utf8))
                toldWaiting = true
            }
            if Self.linesSince(logStart, of: log).contains("shelf: " + Self.mountedLine(library: store.folder.path, mountpoint: path)) {
                print("Mounted \(store.folder.path) at \(path). Unmount with `shelf unmount \(path)`.")
                return
            }
            if let status = daemon.exitStatus() {
                let lastLine = Self.linesSince(logStart, of: log).last ?? "the mount process exited with status \(status)"
                throw CLIError(lastLine.replacingOccurrences(of: "Error: ", with: ""))
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw CLIError("the mount did not come up within \(Self.mountWait); see \(log.path)")
    }

    /// How long `shelf mount` waits for its daemon's mount to appear.
    static let mountWait = Duration.seconds(120)

    /// What the daemon logs once the mount is set up; the background mount waits for it.
    static func mountedLine(library: String, mountpoint: String) -> String {
        "mounted \(library) at \(mountpoint)"
    }

    /// The lines `log` gained past its first `offset` bytes (all of them if it was truncated).
    private static func linesSince(_ offset: Int, of log: URL) -> [String] {
        guard let file = try? FileHandle(forReadingFrom: log) else { return [] }
        defer { try? file.close() }
        let end = (try? file.seekToEnd()) ?? 0
        try? file.seek(toOffset: end >= UInt64(offset) ? UInt64(offset) : 0)
        return String(decoding: (try? file.readToEnd()) ?? Data(), as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

extension MountCommand {
    /// One line on stderr, which a systemd unit's journal (or the background mount's log) keeps.
    static func log(_ line: String) {
        FileHandle.standardError.write(Data("shelf: \(line)\n".utf8))
    }
}

/// A number of seconds on the command line: `10`, `2.5` or `10s`.
struct Seconds: ExpressibleByArgument {
    let value: Double

    init(_ value: Double) { self.value = value }

    init?(argument: String) {
        let digits = argument.hasSuffix("s") ? String(argument.dropLast()) : argument
        guard let value = Double(digits), value >= 0 else { return nil }
        self.value = value
    }

    var defaultValueDescription: String { "\(value.formatted())s" }
}
