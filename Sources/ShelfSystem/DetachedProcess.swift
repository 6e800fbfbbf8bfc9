import Foundation
import Glibc

/// A detached child process: its own session (so a terminal's Ctrl-C does not reach it),
/// stdin from /dev/null, stdout and stderr appended to a log file.
public struct DetachedProcess: Sendable {
    public let pid: pid_t

    /// glibc's `POSIX_SPAWN_SETSID` (a GNU extension since glibc 2.26, which Glibc's Swift
    /// module does not export): the child starts a new session.
    private static let spawnSetSID: Int16 = 0x80

    /// This program, to start another process of it.
    public static var currentExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Starts `executable` with `arguments`, its output appended to the file at `log`.
    public static func spawn(executable: String, arguments: [String], log: String) throws(SystemCallError) -> DetachedProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of ours may leak into the child: a caller waiting for this process's
        // end (a shell's pipe, Foundation's Process) would otherwise wait for the child's.
        for descriptor in inheritedDescriptors() where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A clean signal mask: a blocked SIGTERM or SIGCHLD inherited from whoever ran
        // the parent must not outlive it in the child.
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Self.spawnSetSID | Int16(POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else { throw SystemCallError("start \(executable)", code: result) }
        return DetachedProcess(pid: pid)
    }

    /// This process's open file descriptors that lack close-on-exec.
    private static func inheritedDescriptors() -> [Int32] {
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return open.compactMap(Int32.init).filter { fcntl($0, F_GETFD) >= 0 && fcntl($0, F_GETFD) & FD_CLOEXEC == 0 }
    }

    /// The exit status if the process has ended (reaping it), nil while it runs.
    public func exitStatus() -> Int32? {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        return (status >> 8) & 0xff
    }
}
