import Foundation

/// A record of each mountpoint a test process mounts, in `$TMPDIR/shelf-test-mounts/`, named
/// after the process: `scripts/test` unmounts what a crashed earlier run (a process no longer
/// alive) left mounted, before it runs the suite again.
public enum MountRecords {
    static var folder: URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("shelf-test-mounts", isDirectory: true)
    }

    /// Records `mountpoint` as this process's until ``forget(_:)``.
    public static func record(_ mountpoint: String) {
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try? Data(mountpoint.utf8).write(to: file(for: mountpoint))
    }

    /// The mount at `mountpoint` is gone.
    public static func forget(_ mountpoint: String) {
        try? FileManager.default.removeItem(at: file(for: mountpoint))
    }

    /// `<pid>-<hash of the mountpoint>`: scripts/test reads the pid from the name.
    private static func file(for mountpoint: String) -> URL {
        let hash = mountpoint.utf8.reduce(UInt64(14695981039346656037)) { ($0 ^ UInt64($1)) &* 1099511628211 }
        return folder.appendingPathComponent("\(getpid())-\(String(hash, radix: 16))")
    }
}
