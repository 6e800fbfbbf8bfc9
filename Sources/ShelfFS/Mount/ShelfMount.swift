import Foundation
import FuseKit
import ShelfModel
import ShelfStore
import ShelfSystem

/// A library mounted as a folder of Markdown files: what `shelf mount` runs.
///
/// ```swift
/// let mount = try ShelfMount(store: store, mountpoint: "/home/me/Library")
/// try mount.run()   // blocks until `fusermount3 -u`, SIGINT or SIGTERM
/// ```
///
/// A library linked to a cloud is mounted with its sync engine (`sync`), built by the caller,
/// who also runs its rounds: the mount asks it for placeholders' bytes and the conflicts a
/// save meets, and serves it what it asks of the mount (``MountSync``).
public final class ShelfMount: Sendable {
    public struct Options: Sendable {
        /// Let other users in (`allow_other`; needs `user_allow_other` in /etc/fuse.conf).
        public var allowOther: Bool
        /// libfuse's request trace on stderr.
        public var debug: Bool
        /// How long a read of a placeholder waits for its download before it fails with `EIO`.
        public var downloadTimeout: Duration

        public init(allowOther: Bool = false, debug: Bool = false, downloadTimeout: Duration = .seconds(10)) {
            self.allowOther = allowOther
            self.debug = debug
            self.downloadTimeout = downloadTimeout
        }
    }

    public let mountpoint: String
    private let operations: ShelfFuseOperations
    private let session: FuseSession

    /// Loads the library and mounts it. Throws `StoreError` when the library cannot be read and
    /// `FuseSessionError` (one line: missing or non-empty mountpoint, already mounted, no
    /// /dev/fuse) when the mount cannot be made.
    public init(store: LibraryStore, mountpoint: String, sync: (any MountSync)? = nil, options: Options = Options()) throws {
        self.mountpoint = mountpoint
        LinuxCalls.limitMallocArenas()
        operations = try ShelfFuseOperations(store: store, sync: sync, downloadTimeout: options.downloadTimeout)
        session = try FuseSession(filesystem: operations,
                                  options: ShelfFuseOperations.mountOptions(filesystemName: "shelf:" + store.folder.path,
                                                                            allowOther: options.allowOther,
                                                                            debug: options.debug))
        if options.allowOther { try operations.letOtherUsersIn() }
        try session.mount(at: mountpoint)
        operations.attach(to: session, at: mountpoint)
    }

    /// Serves the mount until it is unmounted (`fusermount3 -u`, SIGINT, SIGTERM); pending saves
    /// are committed before it returns. `whenReady` runs once the mount is fully set up (see
    /// `FuseSession.run(handlingSignals:whenReady:)`): the moment to say it is mounted.
    public func run(whenReady: (@Sendable () -> Void)? = nil) throws {
        try session.run(handlingSignals: true, whenReady: whenReady)
    }
}
