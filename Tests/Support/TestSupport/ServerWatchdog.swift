import Foundation

/// Stops a server a test started once the test process is gone, however it ended: a failed
/// test, a crash, `kill -9`. A detached shell polls the process and then runs the clean-up,
/// so no server outlives its run by more than a moment.
enum ServerWatchdog {
    /// Bash that closes every descriptor but the standard three, then runs its arguments: a
    /// server (or this watchdog) must not hold this process's sockets, FUSE devices or pipes
    /// open after it ends. Foundation also learns that a child exited only once every copy of
    /// a socket it hands the child is closed, so a command that leaves a server running would
    /// never be seen to finish.
    static let closingInheritedDescriptors =
        #"for fd in /proc/self/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && exec {fd}>&-; done 2>/dev/null; "#

    /// Runs `cleanUp` (shell) once this process has exited, and removes `record` from ``LeftoverRecords/servers``.
    static func cleanUp(_ cleanUp: String, record: String) throws {
        let script = closingInheritedDescriptors
            + "while kill -0 \(getpid()) 2>/dev/null; do sleep 0.3; done; \(cleanUp); rm -rf '\(record)'; rm -f \"$0\""
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = ["bash", "-c", script, LeftoverRecords.servers.file(for: record).path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }
}
