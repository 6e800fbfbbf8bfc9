import Foundation
import FuseKit

/// Finds Shelf's mounts in the mount table.
///
/// Shelf mounts carry the file-system type `fuse.shelf` and the source `shelf:<library folder>`
/// (set by ShelfMount), so the table alone tells which library is mounted where.
enum ShelfMounts {
    static func isShelfMount(_ path: String) -> Bool {
        MountTable.mount(at: path)?.filesystemType == "fuse.shelf"
    }

    static func mountpoints(ofLibrary folder: URL) -> [String] {
        MountTable.mounts().filter { $0.filesystemType == "fuse.shelf" && $0.source == "shelf:" + folder.path }
            .map(\.mountpoint)
    }

    static func waitUntilUnmounted(_ path: String, timeout: Duration) throws {
        let deadline = ContinuousClock.now + timeout
        while MountTable.mount(at: path) != nil {
            guard ContinuousClock.now < deadline else {
                throw CLIError("\(path) is still mounted after \(timeout); run `fusermount3 -u -z \(path)` to detach it.")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}
