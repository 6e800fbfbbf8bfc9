import Foundation
import FuseKit
import Glibc
import ShelfModel
import ShelfStore
import ShelfSystem
import Synchronization

extension Errno {
    /// The errno of the last failed system call.
    static var current: Errno { Errno(errno) }
}

/// The real directory that holds everything of the mount that is not an item: user folders,
/// attachments, `.obsidian/`, `.trash/` and editor temp files, stored verbatim.
///
/// Each method is one system call on `<path>` relative to the open `root` folder (`openat` and
/// kin), never following a symlink at the last component, and throws the call's errno. Relative,
/// so that a path as long as the kernel allows on the mount (`PATH_MAX` from the mount's root)
/// is not made too long by the library folder's own path.
struct PlainFileArea: Sendable {
    let root: URL
    /// `root`'s path, kept: every call builds a real path from it, and URL's `path` is costly.
    private let rootPath: String
    private let folder: OpenFolder

    /// The area's folder, open for the mount's life.
    private final class OpenFolder: Sendable {
        let fd: Int32

        init(_ path: String) throws(Errno) {
            fd = Glibc.open(path, LinuxCalls.openPath | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { throw .current }
        }

        deinit { close(fd) }
    }

    init(root: URL) throws(Errno) {
        self.root = root
        rootPath = root.path
        folder = try OpenFolder(rootPath)
    }

    /// `path` relative to the open folder.
    private func relative(_ path: MountPath) -> String {
        path.isRoot ? "." : path.rawValue
    }

    /// Names Shelf itself uses for half-written files and files on their way out; never
    /// listed, and removed at the next mount if a process ended first (``removeLeftovers()``).
    static let internalPrefix = AtomicFile.temporaryPrefix

    func realPath(_ path: MountPath) -> String {
        path.isRoot ? rootPath : rootPath + "/" + path.rawValue
    }

    func status(_ path: MountPath) throws(Errno) -> stat {
        var info = stat()
        guard fstatat(folder.fd, relative(path), &info, AT_SYMLINK_NOFOLLOW) == 0 else { throw .current }
        return info
    }

    func exists(_ path: MountPath) -> Bool {
        (try? status(path)) != nil
    }

    func isDirectory(_ path: MountPath) -> Bool {
        guard let info = try? status(path) else { return false }
        return info.st_mode & S_IFMT == S_IFDIR
    }

    /// Syncs the folder's entries to disk (`fsync` of the folder on the mount).
    func makeFolderDurable(_ path: MountPath) throws(Errno) {
        let fd = openat(folder.fd, relative(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .current }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .current }
    }

    /// Entry names of the folder, without `.` and `..`.
    func entries(of path: MountPath) throws(Errno) -> [String] {
        let fd = openat(folder.fd, relative(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .current }
        guard let dir = fdopendir(fd) else {
            let error = Errno.current
            close(fd)
            throw error
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// `Books`, `Notes` and every folder inside them where items live (hidden ones are plain).
    func itemFolders() -> [MountPath] {
        var folders: [MountPath] = []
        var waiting = ItemKind.allCases.map { MountPath($0.folderName) }
        while let folder = waiting.popLast() {
            guard PathRules.isItemFolder(folder), isDirectory(folder) else { continue }
            folders.append(folder)
            waiting += ((try? entries(of: folder)) ?? []).map(folder.appending)
        }
        return folders
    }

    func open(_ path: MountPath, flags: Int32, mode: mode_t = 0o644) throws(Errno) -> Int32 {
        let fd = openat(folder.fd, relative(path), flags | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .current }
        return fd
    }

    func makeDirectory(_ path: MountPath, mode: mode_t) throws(Errno) {
        guard mkdirat(folder.fd, relative(path), mode) == 0 else { throw .current }
    }

    /// A FIFO, socket or device node (`mode` has the type bits).
    func makeNode(_ path: MountPath, mode: mode_t, device: dev_t) throws(Errno) {
        guard mknodat(folder.fd, relative(path), mode, device) == 0 else { throw .current }
    }

    /// Another name for the file at `existing` (a hard link).
    func link(_ existing: MountPath, to path: MountPath) throws(Errno) {
        guard linkat(folder.fd, relative(existing), folder.fd, relative(path), 0) == 0 else { throw .current }
    }

    func removeDirectory(_ path: MountPath) throws(Errno) {
        guard unlinkat(folder.fd, relative(path), AT_REMOVEDIR) == 0 else { throw .current }
    }

    func unlink(_ path: MountPath) throws(Errno) {
        guard unlinkat(folder.fd, relative(path), 0) == 0 else { throw .current }
    }

    /// Removes the file at `path` from the folder now and from the disk a moment later: it is
    /// renamed to an internal name at once and unlinked on a background queue. Freeing a file
    /// (its blocks and its inode) can cost more than all the rest of an editor's save, and
    /// nobody waits for it. Close its descriptors first, or the disk frees it at their close.
    func removeInBackground(_ path: MountPath) throws(Errno) {
        let hidden = path.parent.appending(AtomicFile.temporaryName())
        try rename(path, to: hidden)
        let real = realPath(hidden)
        Self.removals.async { _ = Glibc.unlink(real) }
    }

    /// Waits until every background removal is done (unmount).
    static func finishRemovals() {
        removals.sync {}
    }

    private static let removals = DispatchQueue(label: "shelf.plain-removals")

    /// Deletes Shelf's internal files left anywhere in the area by a crash (half-written or
    /// not yet removed): they are never listed, and nothing refers to them.
    func removeLeftovers() {
        var waiting: [MountPath] = [.root]
        while let folder = waiting.popLast() {
            for name in (try? entries(of: folder)) ?? [] {
                let path = folder.appending(name)
                if name.hasBytePrefix(Self.internalPrefix) {
                    try? unlink(path)
                } else if isDirectory(path) {
                    waiting.append(path)
                }
            }
        }
    }

    func rename(_ from: MountPath, to: MountPath, flags: UInt32 = 0) throws(Errno) {
        guard LinuxCalls.renameat2(folder.fd, relative(from), folder.fd, relative(to), flags) == 0 else { throw .current }
    }

    func symlink(_ path: MountPath, target: String) throws(Errno) {
        guard symlinkat(target, folder.fd, relative(path)) == 0 else { throw .current }
    }

    func readLink(_ path: MountPath) throws(Errno) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlinkat(folder.fd, relative(path), &buffer, buffer.count - 1)
        guard count >= 0 else { throw .current }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func changeMode(_ path: MountPath, to mode: mode_t) throws(Errno) {
        guard fchmodat(folder.fd, relative(path), mode, 0) == 0 else { throw .current }
    }

    func changeOwner(_ path: MountPath, uid: uid_t, gid: gid_t) throws(Errno) {
        guard fchownat(folder.fd, relative(path), uid, gid, AT_SYMLINK_NOFOLLOW) == 0 else { throw .current }
    }

    /// Sets access and modification times; nil leaves one as it is.
    func setTimes(_ path: MountPath, access: timespec?, modification: timespec?) throws(Errno) {
        let omit = timespec(tv_sec: 0, tv_nsec: LinuxCalls.timeOmit)
        let times = [access ?? omit, modification ?? omit]
        guard utimensat(folder.fd, relative(path), times, AT_SYMLINK_NOFOLLOW) == 0 else { throw .current }
    }

    /// Writes `data` as the whole file at `path`, replacing it atomically (``AtomicFile``).
    func writeAtomically(_ data: [UInt8], to path: MountPath) throws(Errno) {
        do {
            try AtomicFile.write(data, to: realPath(path))
        } catch {
            throw Errno(for: error)
        }
    }

    /// The whole content of the file at `path`.
    func readAll(_ path: MountPath) throws(Errno) -> [UInt8] {
        let fd = try open(path, flags: O_RDONLY)
        defer { close(fd) }
        return try Self.readAll(fd: fd)
    }

    static func readAll(fd: Int32) throws(Errno) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        var offset: off_t = 0
        while true {
            let count = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            guard count >= 0 else { throw .current }
            if count == 0 { return result }
            result += chunk[..<count]
            offset += off_t(count)
        }
    }

    // MARK: Extended attributes, passed through

    func getAttribute(_ path: MountPath, name: String) throws(Errno) -> [UInt8] {
        let size = LinuxCalls.lgetxattr(realPath(path), name, nil, 0)
        guard size >= 0 else { throw .current }
        var buffer = [UInt8](repeating: 0, count: size)
        let count = LinuxCalls.lgetxattr(realPath(path), name, &buffer, size)
        guard count >= 0 else { throw .current }
        return Array(buffer[..<count])
    }

    func setAttribute(_ path: MountPath, name: String, value: [UInt8], flags: Int32) throws(Errno) {
        guard LinuxCalls.lsetxattr(realPath(path), name, value, value.count, flags) == 0 else { throw .current }
    }

    func attributeNames(_ path: MountPath) throws(Errno) -> [String] {
        let size = LinuxCalls.llistxattr(realPath(path), nil, 0)
        guard size >= 0 else { throw .current }
        var buffer = [CChar](repeating: 0, count: size)
        let count = LinuxCalls.llistxattr(realPath(path), &buffer, size)
        guard count >= 0 else { throw .current }
        return buffer[..<count].split(separator: 0).map {
            String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    func removeAttribute(_ path: MountPath, name: String) throws(Errno) {
        guard LinuxCalls.lremovexattr(realPath(path), name) == 0 else { throw .current }
    }

    // MARK: Metadata an item takes over or leaves behind

    /// The modification time, mode bits and user attributes of the file at `path`.
    func metadata(of path: MountPath) throws(Errno) -> ItemCommitter.FileMetadata {
        let info = try status(path)
        var attributes: [String: Data] = [:]
        for name in try attributeNames(path) where ItemAttributes.isUserSettable(name) {
            attributes[name] = Data(try getAttribute(path, name: name))
        }
        let modified = FileTime(seconds: Int64(info.st_mtim.tv_sec), nanoseconds: Int32(info.st_mtim.tv_nsec)).date
        return ItemCommitter.FileMetadata(modified: modified, permissions: UInt32(info.st_mode & 0o7777),
                                          attributes: attributes)
    }

    /// Gives the file at `path` an item's metadata (an item file renamed to a plain name).
    func apply(_ metadata: ItemCommitter.FileMetadata, to path: MountPath) throws(Errno) {
        try changeMode(path, to: mode_t(metadata.permissions))
        for (name, value) in metadata.attributes {
            try setAttribute(path, name: name, value: Array(value), flags: 0)
        }
        try setTimes(path, access: nil, modification: timespec(FileTime(metadata.modified)))
    }

}
