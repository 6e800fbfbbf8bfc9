import Foundation
import Glibc
import ShelfStore
import ShelfSystem

extension MountControl {
    /// Serves one mount's socket on its own thread until ``stop()``.
    final class Server: Sendable {
        private let socketURL: URL
        private let listener: Int32
        private let commit: @Sendable () throws -> Void
        /// Runs a sync round and describes it; nil for a library not linked to a cloud.
        private let sync: (@Sendable () throws -> String)?
        private let worker = WorkerThread(name: "shelf.mount-control")

        /// Listens at `run/control-<pid>.sock` in `library`; `commit` and `sync` answer requests.
        init(library: URL, commit: @escaping @Sendable () throws -> Void,
             sync: (@Sendable () throws -> String)? = nil) throws {
            let folder = LibraryLayout(folder: library).controlSockets
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            let name = MountControl.socketName(of: getpid())
            socketURL = folder.appendingPathComponent(name)
            unlink(socketURL.path)  // a dead process of the same pid left it
            listener = try MountControl.withShortAddress(of: folder, name: name) { address, length in
                let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                guard fd >= 0 else { throw SystemCallError("make a control socket") }
                let previous = umask(0o077)
                defer { umask(previous) }
                guard bind(fd, address, length) == 0, listen(fd, 16) == 0 else {
                    let error = SystemCallError("listen at \(folder.path)/\(name)")
                    close(fd)
                    throw error
                }
                return fd
            }
            self.commit = commit
            self.sync = sync
        }

        func start() {
            worker.start { [self] in serveUntilStopped() }
        }

        /// Stops listening, waits for the request under way, and removes the socket.
        func stop() {
            unlink(socketURL.path)
            worker.stop { shutdown(listener, Int32(SHUT_RDWR)) }  // wakes the thread's accept()
            close(listener)
        }

        private func serveUntilStopped() {
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    break  // shut down by stop()
                }
                answer(connection)
            }
        }

        /// Answers and closes `connection`. A sync round runs off this thread, so commits asked
        /// for meanwhile are not held up by it.
        private func answer(_ connection: Int32) {
            MountControl.setTimeout(connection, .seconds(5))
            let request = MountControl.readLine(connection)
            let work: @Sendable () throws -> String
            switch (request, sync) {
            case ("commit", _): work = { [commit] in try commit(); return "" }
            case ("sync", let sync?): work = sync
            case ("sync", nil): work = { throw MountControlError.notLinked }
            default: work = { throw MountControlError.unknownRequest }
            }
            let reply: @Sendable () -> Void = {
                do {
                    let report = try work()
                    MountControl.writeLine(connection, report.isEmpty ? "ok" : "ok " + report)
                } catch {
                    MountControl.writeLine(connection, "error \(error)")
                }
                close(connection)
            }
            if request == "sync" { DispatchQueue.global().async(execute: reply) } else { reply() }
        }
    }
}
