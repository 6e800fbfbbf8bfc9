import Foundation
import ShelfStore
import ShelfSystem

extension MountControl {
    /// Serves one mount's socket on its own thread until ``stop()``.
    final class Server: Sendable {
        private let socketURL: URL
        private let listener: UnixSocket
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
            let name = MountControl.socketName(of: ProcessInfo.processInfo.processIdentifier)
            socketURL = folder.appendingPathComponent(name)
            try? FileEntries.removeFile(socketURL.path)  // a dead process of the same pid left it
            let listener = try UnixSocket.open(.stream, for: "make a control socket")
            do {
                try MountControl.withShortAddress(of: folder, name: name) { address, length in
                    try listener.listen(at: address, length: length, for: "listen at \(folder.path)/\(name)")
                }
            } catch {
                listener.close()
                throw error
            }
            self.listener = listener
            self.commit = commit
            self.sync = sync
        }

        func start() {
            worker.start { [self] in serveUntilStopped() }
        }

        /// Stops listening, waits for the request under way, and removes the socket.
        func stop() {
            try? FileEntries.removeFile(socketURL.path)
            worker.stop { listener.shutdown() }  // wakes the thread's accept()
            listener.close()
        }

        private func serveUntilStopped() {
            while let connection = listener.accept() { answer(connection) }  // nil: shut down by stop()
        }

        /// Answers and closes `connection`. A sync round runs off this thread, so commits asked
        /// for meanwhile are not held up by it.
        private func answer(_ connection: UnixSocket) {
            connection.setTimeout(.seconds(5))
            let request = connection.readLine()
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
                    connection.writeLine(report.isEmpty ? "ok" : "ok " + report)
                } catch {
                    connection.writeLine("error \(error)")
                }
                connection.close()
            }
            if request == "sync" { DispatchQueue.global().async(execute: reply) } else { reply() }
        }
    }
}
