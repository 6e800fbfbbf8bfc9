import Foundation

/// What a test process set up outside itself, recorded under `$TMPDIR/` in one file per thing,
/// named after the process: `scripts/test` cleans up what a crashed earlier run (a process no
/// longer alive) left behind before it runs the suite again.
public struct LeftoverRecords: Sendable {
    /// Mountpoints (`shelf-test-mounts/`): unmounted.
    public static let mounts = LeftoverRecords(folderName: "shelf-test-mounts")
    /// Folders of PostgreSQL clusters and poolers (`shelf-test-servers/`): stopped and removed.
    public static let servers = LeftoverRecords(folderName: "shelf-test-servers")

    let folderName: String

    private var folder: URL {
        FileManager.default.temporaryDirectory.appendingPathComponent(folderName, isDirectory: true)
    }

    /// Records `path` as this process's until ``forget(_:)``.
    public func record(_ path: String) {
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try? Data(path.utf8).write(to: file(for: path))
    }

    /// What `path` names is gone.
    public func forget(_ path: String) {
        try? FileManager.default.removeItem(at: file(for: path))
    }

    /// `<pid>-<hash of the path>`: scripts/test reads the pid from the name.
    func file(for path: String) -> URL {
        let hash = path.utf8.reduce(UInt64(14695981039346656037)) { ($0 ^ UInt64($1)) &* 1099511628211 }
        return folder.appendingPathComponent("\(getpid())-\(String(hash, radix: 16))")
    }
}
