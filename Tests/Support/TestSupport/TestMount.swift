import Foundation
import FuseKit
import ShelfSystem

/// A real FUSE mount of an in-process filesystem for tests, with a deadline on everything.
///
/// ```swift
/// try TestMount.withMount(MyFilesystem()) { mount in
///     let listing = try mount.shell("ls -a")          // runs in the mountpoint, 10 s deadline
///     #expect(listing.stdout.contains("hello.txt"))
///     let text = try mount.perform { try String(contentsOfFile: mount.path("hello.txt"), encoding: .utf8) }
/// }
/// ```
///
/// - The mountpoint is a fresh temporary directory; the filesystem is served on a background
///   thread by ``FuseSession/run(handlingSignals:)``; signals are left alone unless asked
///   (libfuse's handlers are process-wide, so only one mount may take them at a time).
/// - Mounts are serialized process-wide (one at a time, whichever test target asks), because
///   the tests of several targets may run in parallel in one process.
/// - Every operation has a deadline. An operation that misses it aborts the FUSE connection
///   (`/sys/fs/fuse/connections/<n>/abort`) so the stuck caller gets `ENOTCONN`, and throws
///   ``TestMountError/timedOut(_:after:)``: a hung filesystem fails the test instead of hanging it.
/// - Teardown always happens, in order of force: `fusermount3 -u`, `fusermount3 -u -z`, abort.
public final class TestMount: @unchecked Sendable {
    public let mountpoint: String
    public let session: FuseSession
    /// The kernel connection number (`/sys/fs/fuse/connections/<n>`), known once live.
    private var connection: Int?
    private let connectionLock = NSLock()
    /// Guards `outcome`, set once when `run()` returns, and `servingThread`.
    private let runEnded = NSCondition()
    private var outcome: Result<Void, FuseSessionError>?
    private var servingThread: pthread_t?
    /// Signalled once by the session when the mount is set up.
    private let ready = DispatchSemaphore(value: 0)

    /// One mount at a time in the whole test process.
    private static let exclusive = NSLock()

    /// The filesystem's invalidation queue.
    public var notifier: Notifier { session.notifier }
    /// The session's close watcher (for filesystems with stateless opens).
    public var closeWatcher: CloseWatcher { session.closeWatcher }

    /// Mounts `filesystem` on a fresh temporary directory, runs `body` once the mount is
    /// ready, and always unmounts.
    public static func withMount<T>(_ filesystem: some FuseOperations,
                                    options: MountOptions = MountOptions(filesystemName: "fusekit-test", subtype: "test"),
                                    handlingSignals: Bool = false,
                                    _ body: (TestMount) throws -> T) throws -> T {
        exclusive.lock()
        defer { exclusive.unlock() }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("fusekit-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // rmdir, never a recursive delete: if unmounting failed, that would walk into the mount.
        defer { rmdir(directory) }
        LeftoverRecords.mounts.record(directory)
        defer { LeftoverRecords.mounts.forget(directory) }
        let mount = try TestMount(filesystem: filesystem, options: options, handlingSignals: handlingSignals,
                                  mountpoint: directory)
        defer { mount.tearDown() }
        try mount.waitUntilLive()
        return try body(mount)
    }

    private init(filesystem: some FuseOperations, options: MountOptions, handlingSignals: Bool,
                 mountpoint: String) throws {
        self.mountpoint = mountpoint
        session = try FuseSession(filesystem: filesystem, options: options)
        try session.mount(at: mountpoint)
        let thread = Thread { [self, ready] in
            runEnded.lock()
            servingThread = pthread_self()
            runEnded.unlock()
            let result = Result { () throws(FuseSessionError) in
                try session.run(handlingSignals: handlingSignals) { ready.signal() }
            }
            runEnded.lock()
            outcome = result
            runEnded.broadcast()
            runEnded.unlock()
        }
        thread.name = "TestMount.run"
        thread.start()
    }

    /// Waits until the session says the mount is ready, is listed in /proc/self/mountinfo and
    /// answers a `stat` of its root.
    private func waitUntilLive(timeout: Duration = .seconds(10)) throws {
        guard ready.wait(timeout: .now() + timeout.timeInterval) == .success,
              let mounted = MountTable.mount(at: mountpoint) else { throw TestMountError.mountNotLive(mountpoint) }
        connectionLock.lock()
        connection = mounted.deviceMinor
        connectionLock.unlock()
        let mountpoint = self.mountpoint
        let answered = try perform(timeout: timeout) {
            var info = stat()
            return stat(mountpoint, &info) == 0
        }
        guard answered else { throw TestMountError.mountNotLive(mountpoint) }
    }

    /// The absolute path of `relative` inside the mount.
    public func path(_ relative: String) -> String {
        (mountpoint as NSString).appendingPathComponent(relative)
    }

    /// What ``FuseSession/run(handlingSignals:)`` returned, once it has.
    public var runOutcome: Result<Void, FuseSessionError>? {
        runEnded.lock()
        defer { runEnded.unlock() }
        return outcome
    }

    /// Waits until `run()` has returned; false if it has not within `timeout`.
    private func waitForRunToEnd(timeout: Duration) -> Bool {
        let deadline = Date().addingTimeInterval(timeout.timeInterval)
        runEnded.lock()
        defer { runEnded.unlock() }
        while outcome == nil {
            guard runEnded.wait(until: deadline) else { return false }
        }
        return true
    }

    /// Runs `executable` (looked up in PATH) with the mountpoint as working directory.
    public func run(_ executable: String, _ arguments: [String] = [], input: String? = nil,
                    timeout: Duration = .seconds(10)) throws -> CommandResult {
        do {
            return try CommandRunner.run(executable, arguments, in: mountpoint, input: input, timeout: timeout)
        } catch TestMountError.timedOut(let what, let after) {
            abortConnection()
            throw TestMountError.timedOut(what, after: after)
        }
    }

    /// Runs a `/bin/sh` script with the mountpoint as working directory.
    public func shell(_ script: String, input: String? = nil, timeout: Duration = .seconds(10)) throws -> CommandResult {
        try run("/bin/sh", ["-c", script], input: input, timeout: timeout)
    }

    /// Runs `body` on its own thread and waits at most `timeout` for it; if it hangs, the
    /// connection is aborted (the stuck call fails with `ENOTCONN`) and this throws.
    public func perform<T: Sendable>(timeout: Duration = .seconds(10), _ body: @escaping @Sendable () throws -> T) throws -> T {
        try Self.perform(timeout: timeout, onTimeout: abortConnection, body)
    }

    /// ``perform(timeout:_:)`` for the FUSE mount at `mountpoint` whoever serves it (a `shelf
    /// mount` daemon too): a file operation there that hangs fails the test instead of hanging it.
    public static func perform<T: Sendable>(on mountpoint: String, timeout: Duration = .seconds(10),
                                            _ body: @escaping @Sendable () throws -> T) throws -> T {
        try perform(timeout: timeout, onTimeout: { abortConnection(of: mountpoint, connection: nil) }, body)
    }

    private static func perform<T: Sendable>(timeout: Duration, onTimeout: () -> Void,
                                             _ body: @escaping @Sendable () throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        let thread = Thread {
            box.set(Result { try body() })
            done.signal()
        }
        thread.start()
        guard done.wait(timeout: .now() + timeout.timeInterval) == .success else {
            onTimeout()
            throw TestMountError.timedOut("in-process file operation", after: timeout)
        }
        return try box.get()
    }

    /// Unmounts with `fusermount3 -u`, as a user would, and waits for `run()` to return.
    /// Returns what it returned (the mount is gone afterwards either way).
    public func unmountExternally(timeout: Duration = .seconds(10)) throws -> Result<Void, FuseSessionError> {
        let result = try CommandRunner.run("fusermount3", ["-u", mountpoint], in: "/", timeout: timeout)
        guard result.status == 0 else { throw TestMountError.commandFailed("fusermount3 -u", result) }
        return try waitForRun(timeout: timeout)
    }

    /// Delivers `signal` to the thread running the session, as a terminal's Ctrl-C or a
    /// service manager's SIGTERM would reach a foreground mount. Only meaningful with
    /// `handlingSignals: true`; otherwise the signal's default action applies to the process.
    public func signalServingThread(_ signal: Int32) {
        runEnded.lock()
        let thread = servingThread
        runEnded.unlock()
        if let thread { pthread_kill(thread, signal) }
    }

    /// Waits until `run()` returns by itself and gives what it returned.
    public func waitForRun(timeout: Duration = .seconds(10)) throws -> Result<Void, FuseSessionError> {
        guard waitForRunToEnd(timeout: timeout), let outcome = runOutcome else {
            abortConnection()
            throw TestMountError.timedOut("run()", after: timeout)
        }
        return outcome
    }

    /// Severs the kernel connection: every pending and future request fails with `ENOTCONN`
    /// and the serving loop ends.
    public func abortConnection() {
        connectionLock.lock()
        let connection = self.connection
        connectionLock.unlock()
        Self.abortConnection(of: mountpoint, connection: connection)
    }

    /// Severs the connection of the FUSE mount at `mountpoint` (its number, if known).
    private static func abortConnection(of mountpoint: String, connection: Int?) {
        guard let connection = connection ?? MountTable.mount(at: mountpoint)?.deviceMinor else { return }
        let path = "/sys/fs/fuse/connections/\(connection)/abort"
        try? "1".write(toFile: path, atomically: false, encoding: .utf8)
    }

    /// Unmounts however it takes, escalating, and waits for the serving thread.
    private func tearDown() {
        let steps: [() -> Void] = [
            { _ = try? CommandRunner.run("fusermount3", ["-u", self.mountpoint], in: "/", timeout: .seconds(5)) },
            { _ = try? CommandRunner.run("fusermount3", ["-u", "-z", self.mountpoint], in: "/", timeout: .seconds(5)) },
            { self.abortConnection() },
        ]
        for step in steps {
            if runOutcome != nil && MountTable.mount(at: mountpoint) == nil { return }
            step()
            _ = waitForRunToEnd(timeout: .seconds(5))
        }
    }
}

/// Why a test mount operation failed.
public enum TestMountError: Error, CustomStringConvertible {
    case timedOut(String, after: Duration)
    case mountNotLive(String)
    case commandFailed(String, CommandResult)

    public var description: String {
        switch self {
        case .timedOut(let what, let after): "\(what) did not finish within \(after); the FUSE connection was aborted"
        case .mountNotLive(let path): "\(path) does not appear in /proc/self/mountinfo after mounting"
        case .commandFailed(let what, let result): "\(what) failed: \(result)"
        }
    }
}

/// A thread-safe slot for a result computed on another thread.
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<T, any Error>?

    func set(_ result: Result<T, any Error>) {
        lock.lock()
        self.result = result
        lock.unlock()
    }

    func get() throws -> T {
        lock.lock()
        defer { lock.unlock() }
        return try result!.get()
    }
}
