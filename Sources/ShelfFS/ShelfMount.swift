import Foundation
import FuseKit
import ShelfStore

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

        public init(allowOther: Bool = false, debug: Bool = false) {
            self.allowOther = allowOther
            self.debug = debug
        }
    }

    public let mountpoint: String
    private let operations: ShelfFuseOperations
    private let session: FuseSession

    /// Loads the library and mounts it. Throws `StoreError` when the library cannot be read and
    /// `FuseSessionError` (one line: missing or non-empty mountpoint, already mounted, no
    /// /dev/fuse) when the mount cannot be made.
    public init(store: LibraryStore, mountpoint: String, options: Options = Options()) throws {
        self.mountpoint = mountpoint
        operations = try ShelfFuseOperations(store: store)
        session = try FuseSession(filesystem: operations,
                                  options: ShelfFuseOperations.mountOptions(filesystemName: "shelf:" + store.folder.path,
                                                                            allowOther: options.allowOther,
                                                                            debug: options.debug))
        try session.mount(at: mountpoint)
        operations.attach(to: session)
    }

    /// Serves the mount until it is unmounted (`fusermount3 -u`, SIGINT, SIGTERM); pending saves
    /// are committed before it returns.
    public func run() throws {
        try session.run(handlingSignals: true)
    }
}
