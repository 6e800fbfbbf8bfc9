import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Listens on a PostgreSQL cloud's channel and calls `news` when a device pushed, so a change
/// saved on one device reaches the others without polling.
///
/// `LISTEN` holds session state, so it has a connection of its own, straight to the server
/// (not through a pooler in transaction mode). When that connection drops (a restart, a killed
/// backend, the network) it is made again with growing pauses, and `news` is called once it is
/// back: the device then reads from its cursor, so nothing pushed meanwhile is missed.
final class PostgresNews: CloudNewsWatch, @unchecked Sendable {
    private let configuration: PostgresConnection.Configuration
    private let channel: String
    private let news: @Sendable () -> Void
    private let logger: Logger
    private let lock = NSLock()
    private var connection: PostgresConnection?
    private var isStopped = false
    private var failures = 0

    init(configuration: PostgresConnection.Configuration, channel: String, logger: Logger, news: @escaping @Sendable () -> Void) {
        self.configuration = configuration
        self.channel = channel
        self.news = news
        self.logger = logger
        connect()
    }

    func stop() {
        let connection = lock.withLock {
            isStopped = true
            return self.connection.take()
        }
        _ = try? connection?.close().wait()
    }

    private func connect() {
        let loop = PostgresConnection.defaultEventLoopGroup.any()
        let listening = PostgresConnection.connect(on: loop, configuration: configuration, id: 2, logger: logger)
            .flatMap { [channel, news, logger] connection in
                connection.addListener(channel: channel) { _, _ in news() }
                return connection.query("LISTEN \(unescaped: PostgresSchema.quoted(channel))", logger: logger).map { _ in connection }
            }
        listening.whenComplete { [self] result in
            switch result {
            case .success(let connection):
                let keep = lock.withLock {
                    guard !isStopped else { return false }
                    self.connection = connection
                    failures = 0
                    return true
                }
                guard keep else {
                    let closing: EventLoopFuture<Void> = connection.close()
                    closing.whenComplete { _ in }
                    return
                }
                // What was pushed while nobody listened.
                news()
                connection.closeFuture.whenComplete { [self] _ in retry(on: loop) }
            case .failure(let error):
                lock.withLock { failures += 1 }
                logger.debug("cannot listen for the cloud's news, trying again: \(error)")
                retry(on: loop)
            }
        }
    }

    /// Connects again after a pause that grows with each failure, up to a minute.
    private func retry(on loop: any EventLoop) {
        let pause: Int64? = lock.withLock {
            connection = nil
            return isStopped ? nil : Int64(min(60, 1 << min(failures, 6)))
        }
        guard let pause else { return }
        loop.scheduleTask(in: .seconds(pause)) { [self] in connect() }
    }
}
