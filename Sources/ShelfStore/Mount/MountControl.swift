import Foundation
import ShelfSystem

/// The channel through which `shelf` commands reach the running mounts of their library, so a
/// command sees every save whose `close()` returned before it started (read-your-writes across
/// processes): the mount commits what is pending, then the command reads the store.
///
/// Each mount listens on a Unix socket `run/control-<pid>.sock` in the library folder (owner
/// only, like the folder). The protocol is one line each way: `commit` → `ok` or
/// `error <message>`; `sync` (a linked library) → `ok <what the round did>` or `error …`, the
/// round run by the mount's own engine, so what it changes reaches the mount's view at once. A
/// command gives every mount a deadline, so a hung mount cannot hang it.
/// Sockets are reached through `/proc/self/fd/<folder descriptor>/…`, which keeps their
/// address short whatever the library's path (a socket address holds at most 107 bytes).
public enum MountControl {
    private static let socketPrefix = "control-"
    private static let socketSuffix = ".sock"

    /// The control socket's name of the mount process `pid`.
    package static func socketName(of pid: pid_t) -> String {
        socketPrefix + "\(pid)" + socketSuffix
    }

    /// The folder of `library`'s control sockets, and the names of those in it, in order.
    private static func sockets(of library: URL) -> (folder: URL, names: [String]) {
        let folder = LibraryLayout(folder: library).controlSockets
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return (folder, names.filter { $0.hasPrefix(socketPrefix) && $0.hasSuffix(socketSuffix) }.sorted())
    }

    /// Has every mount of the library at `library` commit the saves whose writers have closed
    /// their files, waiting at most `timeout` for each. Returns one line per mount that could
    /// not (it answered with an error, or not in time), for the command to show as a warning.
    public static func commitPendingSaves(library: URL, timeout: Duration = .seconds(5)) -> [String] {
        let (folder, names) = sockets(of: library)
        return names.compactMap { name in
            do {
                let answer = try request("commit", to: name, in: folder, timeout: timeout)
                return answer == "ok" ? nil : "the mount (\(name)) could not commit its pending saves: \(answer)"
            } catch let error as SystemCallError where error.code == ECONNREFUSED {
                try? FileEntries.removeFile(folder.appendingPathComponent(name).path)  // its mount process is gone
                return nil
            } catch let error as SystemCallError where error.code == ENOENT {
                return nil  // unmounted meanwhile
            } catch {
                return "the mount (\(name)) did not confirm its pending saves within \(timeout): \(error); what it saved last may be missing here"
            }
        }
    }

    /// Has the library's mount run a sync round with its own engine; nil when no mount
    /// answers (then the command runs the round itself). The answer: `ok …` or `error …`.
    public static func sync(library: URL, timeout: Duration = .seconds(300)) -> String? {
        let (folder, names) = sockets(of: library)
        for name in names {
            if let answer = try? request("sync", to: name, in: folder, timeout: timeout) { return answer }
        }
        return nil
    }

    private static func request(_ line: String, to name: String, in folder: URL, timeout: Duration) throws -> String {
        try withShortAddress(of: folder, name: name) { address, length in
            let socket = try UnixSocket.open(.stream, for: "make a control socket")
            defer { socket.close() }
            socket.setTimeout(timeout)
            try socket.connect(to: address, length: length, for: "connect to the mount")
            socket.writeLine(line)
            guard let answer = socket.readLine() else { throw MountControlError.noAnswer }
            return answer
        }
    }

    /// Runs `body` with the address `/proc/self/fd/<descriptor of folder>/name`.
    package static func withShortAddress<T>(of folder: URL, name: String,
                                            _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> T) throws -> T {
        guard let result = try UnixSocket.withShortAddress(inFolder: folder.path, name: name, body) else {
            throw MountControlError.nameTooLong(name)
        }
        return result
    }

}

package enum MountControlError: Error, CustomStringConvertible {
    case nameTooLong(String)
    case noAnswer
    case notLinked
    case unknownRequest

    package var description: String {
        switch self {
        case .nameTooLong(let name): "the control socket name \(name) is too long"
        case .noAnswer: "no answer"
        case .notLinked: "this mount does not sync: the library was not linked to a cloud when it was mounted"
        case .unknownRequest: "unknown request"
        }
    }
}
