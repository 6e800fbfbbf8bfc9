import Foundation
import ShelfStore
import ShelfSystem

/// Finds Shelf's mounts in the mount table.
///
/// Shelf mounts carry the file-system type `fuse.shelf` and the source `shelf:<library folder>`
/// (set by ShelfMount), so the table alone tells which library is mounted where.
enum ShelfMounts {
    static func isShelfMount(_ path: String) -> Bool {
        MountTable.mount(at: path)?.filesystemType == "fuse.shelf"
    }

    /// Refuses a command that must not run while `store` is mounted, saying how to go on:
    /// `next` is what to do after unmounting (`link, then mount it again`).
    static func requireUnmounted(_ store: LibraryStore, next: String) throws {
        if let mountpoint = mountpoints(ofLibrary: store.folder).first {
            throw CLIError("the library is mounted at \(mountpoint); unmount it (`shelf unmount \(mountpoint)`), \(next).")
        }
    }

    static func mountpoints(ofLibrary folder: URL) -> [String] {
        MountTable.mounts().filter { $0.filesystemType == "fuse.shelf" && $0.source == "shelf:" + folder.path }
            .map(\.mountpoint)
    }

    /// Whether the mount at `mountpoint` lost its process (the kernel ended its connection).
    static func isDisconnected(_ mountpoint: String) -> Bool { MountTable.isDisconnected(mountpoint) }

    /// Makes `path` ready to mount on: a dead Shelf mount there (its process was killed) is
    /// cleared, so the new mount replays its journal and takes over; a live mount or another
    /// file system there is an error naming what to do.
    static func clearForMount(_ path: String) throws {
        guard let existing = MountTable.mount(at: path) else { return }
        let isShelf = existing.filesystemType == "fuse.shelf"
        guard MountTable.isDisconnected(path) else {
            throw CLIError(isShelf
                ? "\(path) is already mounted (\(existing.source)); unmount it first with `shelf unmount \(path)`, or mount on another folder."
                : "\(path) is already a mountpoint (\(existing.filesystemType)); choose an empty folder, or unmount it first.")
        }
        guard isShelf else {
            throw CLIError("\(path) is a dead \(existing.filesystemType) mount of another program; clear it with `fusermount3 -u -z \(path)`, then mount again.")
        }
        FileHandle.standardError.write(Data("shelf: \(path) was a dead mount (its mount process had ended); clearing it and mounting again\n".utf8))
        let status = try runTool("/usr/bin/fusermount3", ["-u", "-z", path])
        guard status == 0 else {
            throw CLIError("could not clear the dead mount at \(path) (fusermount3 exited with \(status)); run `umount -l \(path)` as root, then `shelf mount` again.")
        }
        try waitUntilUnmounted(path, timeout: .seconds(10))
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

    /// The pid of the `shelf mount --foreground` process serving `mountpoint`, if one runs.
    static func daemonPID(mountpoint: String) -> pid_t? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.lazy.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let arguments = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return arguments.contains("--foreground") && arguments.contains(mountpoint) && arguments.contains("mount") ? pid : nil
        }.first
    }

    /// Waits until process `pid` has ended (it commits its last saves before it exits).
    static func waitUntilExited(_ pid: pid_t, timeout: Duration) throws {
        let deadline = ContinuousClock.now + timeout
        while ProcessStatus.isRunning(pid) {
            guard ContinuousClock.now < deadline else {
                throw CLIError("the mount process \(pid) is still saving after \(timeout); its log is <library>/logs/mount.log. Pending saves are kept in the journal if it is stopped.")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}
