import Foundation
import ShelfStore
import Glibc
import FuseKit
import ShelfModel
import Synchronization
import ShelfSystem

/// Unsaved writes to item files, mirrored into the library as they arrive, so a crash of the
/// mount loses nothing the kernel handed over.
///
/// With stateless opens the mount learns of a writer's close only a moment after it returned,
/// and commits then; a daemon killed meanwhile would drop those bytes. So each item file with
/// unsaved writes has a journal entry (its files: ``JournalFolder``), its bytes kept equal to
/// the file's write by write; starting an entry is one new file and one append. Like a disk filesystem's page cache,
/// entries are not synced per write: they survive the process, and `fsync` of the file commits
/// them to the store. An entry ends when its bytes are committed; entries of a process that
/// died are replayed by the next mount. A journal write that fails (a full disk) fails the
/// program's write, before the bytes change.
public final class SaveJournal: Sendable {
    typealias Target = JournalFolder.Target

    /// One item file's unsaved bytes on disk. Used under its buffer's lock only.
    final class Entry: @unchecked Sendable {
        fileprivate let inode: UInt64
        fileprivate let descriptor: Int32

        fileprivate init(inode: UInt64, descriptor: Int32) {
            self.inode = inode
            self.descriptor = descriptor
        }
    }

    /// An entry left by a mount that ended without committing it, moved into `set-aside/` while
    /// it is replayed: a replay that takes the mount down leaves it there, reported, rather than
    /// taking every later mount down too.
    struct Leftover {
        var target: Target
        /// Where its bytes are, and how many there are (read only when small enough to save).
        var path: String
        var size: Int
        let journal: JournalFolder
        /// Reads its bytes.
        func bytes() throws(Errno) -> [UInt8] { try SaveJournal.readAll(path, size: size) }
        /// Removes it: its bytes are committed, or moved elsewhere.
        func remove() { journal.removeAside(path) }
        /// Leaves it set aside, with `reason` for `shelf status`.
        func setAside(because reason: String) { journal.explain(path, target: target, reason: reason) }
    }

    /// The journal's files: every entry's file name is made from it.
    private let folder: JournalFolder
    /// This process's targets file and how many of its entries are open: emptied whenever
    /// none is, so it never grows beyond the entries of one busy moment.
    private let targets: Mutex<(descriptor: Int32, open: Int)>

    init(library: URL) throws {
        folder = JournalFolder(library: library)
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let descriptor = Glibc.open(folder.targetsPath(of: getpid()), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Errno.current }
        targets = Mutex((descriptor, 0))
    }

    deinit {
        _ = targets.withLock { close($0.descriptor) }
    }

    /// Starts the entry of `inode`, holding `bytes`, to be saved into `target`.
    func begin(_ inode: UInt64, target: Target, bytes: [UInt8]) throws(Errno) -> Entry {
        let path = folder.bytesPath(of: getpid(), inode)
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .current }
        return try opened(Entry(inode: inode, descriptor: descriptor), target: target) { entry throws(Errno) in
            try write(bytes, at: 0, to: entry)
        }
    }

    /// Starts the entry of `inode` with the file at `path` as its bytes, moved into the journal
    /// (a temp file renamed over an item: its bytes are on disk already); nil when it cannot
    /// move there (another filesystem), and `path` is left as it was.
    func begin(_ inode: UInt64, target: Target, movingFileAt path: String) throws(Errno) -> Entry? {
        let entryPath = folder.bytesPath(of: getpid(), inode)
        guard rename(path, entryPath) == 0 else {
            if errno == EXDEV { return nil }
            throw .current
        }
        let descriptor = Glibc.open(entryPath, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = Errno.current
            _ = rename(entryPath, path)
            throw error
        }
        return try opened(Entry(inode: inode, descriptor: descriptor), target: target) { _ throws(Errno) in }
    }

    /// Counts `entry` open and records its target once `fill` has given it its bytes; on a
    /// failure the entry ends.
    private func opened(_ entry: Entry, target: Target, fill: (Entry) throws(Errno) -> Void) throws(Errno) -> Entry {
        targets.withLock { $0.open += 1 }
        do {
            try fill(entry)
            try retarget(entry, to: target)
        } catch {
            end(entry)
            throw error
        }
        return entry
    }

    /// Up to `count` bytes of `entry` at `offset`.
    func read(_ entry: Entry, offset: Int, count: Int) throws(Errno) -> [UInt8] {
        try Self.read(entry.descriptor, offset: offset, count: count)
    }

    private static func read(_ descriptor: Int32, offset: Int, count: Int) throws(Errno) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + filled, count - filled, off_t(offset + filled)) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw .current }
            if got == 0 { break }
            filled += got
        }
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// The `size` bytes of the file at `path`.
    fileprivate static func readAll(_ path: String, size: Int) throws(Errno) -> [UInt8] {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .current }
        defer { close(descriptor) }
        return try read(descriptor, offset: 0, count: size)
    }

    func write(_ bytes: some ContiguousBytes, at offset: Int, to entry: Entry) throws(Errno) {
        let written = bytes.withUnsafeBytes { pwrite(entry.descriptor, $0.baseAddress, $0.count, off_t(offset)) }
        let expected = bytes.withUnsafeBytes(\.count)
        guard written >= 0 else { throw .current }
        guard written == expected else { throw Errno.noSpace }
    }

    func truncate(_ entry: Entry, to size: Int) throws(Errno) {
        guard ftruncate(entry.descriptor, off_t(size)) == 0 else { throw .current }
    }

    /// Records where `entry`'s bytes go from now on: one appended line, whole or (torn by a
    /// crash of the machine) ignored, so a crash leaves the old target or the new one.
    func retarget(_ entry: Entry, to target: Target) throws(Errno) {
        let line = Array(target.line(inode: entry.inode).utf8)
        try targets.withLock { targets throws(Errno) in
            let written = Glibc.write(targets.descriptor, line, line.count)
            guard written >= 0 else { throw .current }
            guard written == line.count else { throw Errno.noSpace }
        }
    }

    /// Ends `entry`: its bytes are committed (or no longer wanted).
    func end(_ entry: Entry) {
        unlink(folder.bytesPath(of: getpid(), entry.inode))
        closed(entry)
    }

    /// Ends `entry` by moving its bytes to `path` (a file of the library, so no byte is copied).
    func end(_ entry: Entry, movingBytesTo path: String) throws(Errno) {
        guard rename(folder.bytesPath(of: getpid(), entry.inode), path) == 0 else { throw .current }
        closed(entry)
    }

    private func closed(_ entry: Entry) {
        close(entry.descriptor)
        targets.withLock { targets in
            targets.open -= 1
            if targets.open == 0 { _ = ftruncate(targets.descriptor, 0) }
        }
    }

    /// Entries of mount processes that are no longer running, by process and inode, each moved
    /// into `set-aside/` first (see ``Leftover``); a process's targets file goes with them.
    func leftovers() -> [Leftover] {
        folder.endedProcesses().flatMap { pid -> [Leftover] in
            let entries = folder.entries(of: pid).sorted { $0.key < $1.key }
            let leftovers = entries.compactMap { inode, target -> Leftover? in
                let path = folder.setAsidePath(of: "\(pid)-\(inode)")
                var info = stat()
                guard folder.move(folder.bytesPath(of: pid, inode), aside: path, target: target,
                                  reason: "the mount ended while saving these bytes from the journal"),
                      stat(path, &info) == 0 else { return nil }
                return Leftover(target: target, path: path, size: Int(info.st_size), journal: folder)
            }
            unlink(folder.targetsPath(of: pid))
            return leftovers
        }
    }
}
