import Foundation
import FuseKit
import Logging
import ShelfModel
import ShelfStore
import ShelfSync
import ShelfSystem

/// A library mounted as a folder of Markdown files: what `shelf mount` runs.
///
/// ```swift
/// let mount = try ShelfMount(store: store, mountpoint: "/home/me/Library")
/// try mount.run()   // blocks until `fusermount3 -u`, SIGINT or SIGTERM
/// ```
public final class ShelfMount: Sendable {
    public struct Options: Sendable {
        /// Let other users in (`allow_other`; needs `user_allow_other` in /etc/fuse.conf).
        public var allowOther: Bool
        /// libfuse's request trace on stderr.
        public var debug: Bool
        /// Seconds between sync rounds of a linked library when nothing wakes it sooner.
        public var syncInterval: TimeInterval
        /// How long a read of a placeholder waits for its download before it fails with `EIO`.
        public var downloadTimeout: Duration

        public init(allowOther: Bool = false, debug: Bool = false, syncInterval: TimeInterval = 2,
                    downloadTimeout: Duration = .seconds(10)) {
            self.allowOther = allowOther
            self.debug = debug
            self.syncInterval = syncInterval
            self.downloadTimeout = downloadTimeout
        }
    }

    public let mountpoint: String
    private let operations: ShelfFuseOperations
    private let session: FuseSession
    /// Syncs a library linked to a cloud while it is mounted; changes it brings reach the
    /// mount through the store's change feed like any other process's.
    private let syncRunner: SyncRunner?

    /// Loads the library and mounts it. Throws `StoreError` when the library cannot be read and
    /// `FuseSessionError` (one line: missing or non-empty mountpoint, already mounted, no
    /// /dev/fuse) when the mount cannot be made.
    public init(store: LibraryStore, mountpoint: String, options: Options = Options()) throws {
        self.mountpoint = mountpoint
        LinuxCalls.limitMallocArenas()
        let engine = try store.cloudLink().map { SyncEngine(store: store, cloud: try CloudLocation.backend($0.location)) }
        operations = try ShelfFuseOperations(store: store, sync: engine, downloadTimeout: options.downloadTimeout)
        session = try FuseSession(filesystem: operations,
                                  options: ShelfFuseOperations.mountOptions(filesystemName: "shelf:" + store.folder.path,
                                                                            allowOther: options.allowOther,
                                                                            debug: options.debug))
        syncRunner = engine.map { SyncRunner(engine: $0, interval: options.syncInterval, logger: Logger(label: "shelf.sync")) }
        if options.allowOther { try operations.letOtherUsersIn() }
        try session.mount(at: mountpoint)
        operations.attach(to: session, at: mountpoint)
    }

    /// Serves the mount until it is unmounted (`fusermount3 -u`, SIGINT, SIGTERM); pending saves
    /// are committed before it returns.
    public func run() throws {
        syncRunner?.start()
        defer { syncRunner?.stop() }
        try session.run(handlingSignals: true)
    }
}
