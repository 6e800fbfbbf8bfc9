import Foundation

/// Stops a server a test started once the test process is gone, however it ended: a failed
/// test, a crash, `kill -9`. A detached shell polls the process and then runs the clean-up,
/// so no server outlives its run by more than a moment.
enum ServerWatchdog {
    /// `command` started with a clean slate: no descriptor of this process's but the standard
    /// three, and no signal blocked or ignored. A server (or this watchdog) must not hold the
    /// test process's sockets, FUSE devices or pipes open after it ends, and Foundation learns
    /// that a child exited only once every copy of a socket it hands the child is closed. Test
    /// threads block most signals, and a child inherits that: PgBouncer would ignore `kill`.
    static func cleanSlate(_ command: [String]) -> [String] {
        let code = """
            import os, signal, sys
            signal.pthread_sigmask(signal.SIG_SETMASK, set())
            for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
                signal.signal(number, signal.SIG_DFL)
            os.closerange(3, os.sysconf("SC_OPEN_MAX"))
            os.execvp(sys.argv[1], sys.argv[1:])
            """
        return ["python3", "-c", code] + command
    }

    /// Runs `cleanUp` (shell) once this process has exited, and removes `record` from ``LeftoverRecords/servers``.
    static func cleanUp(_ cleanUp: String, record: String) throws {
        let script = "while kill -0 \(getpid()) 2>/dev/null; do sleep 0.3; done; \(cleanUp); rm -rf '\(record)'; rm -f \"$0\""
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = cleanSlate(["bash", "-c", script, LeftoverRecords.servers.file(for: record).path])
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }
}
