import Foundation
import Glibc
import FuseKit
import ShelfModel
import Synchronization

/// Unsaved writes to item files, mirrored into the library as they arrive, so a crash of the
/// mount loses nothing the kernel handed over.
///
/// With stateless opens the mount learns of a writer's close only a moment after it returned,
/// and commits then; a daemon killed meanwhile would drop those bytes. So each item file with
/// unsaved writes has a journal entry in `<library>/journal/`: `<pid>-<inode>.bytes`, the bytes
/// the file shows, kept equal to them write by write. Where each entry's bytes are to be saved
/// is a line in the process's `<pid>.targets`, appended to (the last line of an inode wins), so
/// starting an entry is one new file and one append. Like a disk filesystem's page cache,
/// entries are not synced per write: they survive the process, and `fsync` of the file commits
/// them to the store. An entry ends when its bytes are committed; entries of a process that
/// died are replayed by the next mount. A journal write that fails (a full disk) fails the
/// program's write, before the bytes change.
public final class SaveJournal: Sendable {
    /// Where a journal entry's bytes are saved.
    enum Target: Equatable, Sendable {
        /// An existing item, as of the version its bytes started from.
        case item(ItemID, baseVersion: Int64?)
        /// A file created through the mount that is no item yet.
        case newFile(path: String)
    }

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
        /// Reads its bytes.
        func bytes() throws(Errno) -> [UInt8] { try SaveJournal.readAll(path, size: size) }
        /// Removes it: its bytes are committed, or moved elsewhere.
        func remove() { SetAside.remove(path) }
        /// Leaves it set aside, with `reason` for `shelf status`.
        func setAside(because reason: String) { SetAside.explain(path, target: target, reason: reason) }
    }

    /// The journal folder's path: every entry's file name is made from it.
    private let folderPath: String
    /// This process's targets file and how many of its entries are open: emptied whenever
    /// none is, so it never grows beyond the entries of one busy moment.
    private let targets: Mutex<(descriptor: Int32, open: Int)>

    init(library: URL) throws {
        let folder = library.appendingPathComponent("journal", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        folderPath = folder.path
        let descriptor = Glibc.open(Self.targetsPath(of: getpid(), in: folderPath), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Errno.current }
        targets = Mutex((descriptor, 0))
    }

    deinit {
        _ = targets.withLock { close($0.descriptor) }
    }

    /// Starts the entry of `inode`, holding `bytes`, to be saved into `target`.
    func begin(_ inode: UInt64, target: Target, bytes: [UInt8]) throws(Errno) -> Entry {
        let path = bytesPath(of: getpid(), inode)
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
        let entryPath = bytesPath(of: getpid(), inode)
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
        unlink(bytesPath(of: getpid(), entry.inode))
        closed(entry)
    }

    /// Ends `entry` by moving its bytes to `path` (a file of the library, so no byte is copied).
    func end(_ entry: Entry, movingBytesTo path: String) throws(Errno) {
        guard rename(bytesPath(of: getpid(), entry.inode), path) == 0 else { throw .current }
        closed(entry)
    }

    private func closed(_ entry: Entry) {
        close(entry.descriptor)
        targets.withLock { targets in
            targets.open -= 1
            if targets.open == 0 { _ = ftruncate(targets.descriptor, 0) }
        }
    }

    private func bytesPath(of pid: pid_t, _ inode: UInt64) -> String {
        Self.bytesPath(of: pid, inode, in: folderPath)
    }

    private static func bytesPath(of pid: pid_t, _ inode: UInt64, in folder: String) -> String {
        "\(folder)/\(pid)-\(inode).bytes"
    }

    private static func targetsPath(of pid: pid_t, in folder: String) -> String {
        "\(folder)/\(pid).targets"
    }

    /// Entries of mount processes that are no longer running, by process and inode, each moved
    /// into `set-aside/` first (see ``Leftover``); a process's targets file goes with them.
    func leftovers() -> [Leftover] {
        Self.endedProcesses(in: folderPath).flatMap { pid -> [Leftover] in
            let entries = Self.entries(of: pid, in: folderPath).sorted { $0.key < $1.key }
            let leftovers = entries.compactMap { inode, target -> Leftover? in
                let path = SetAside.path(of: "\(pid)-\(inode)", in: folderPath)
                var info = stat()
                guard SetAside.move(bytesPath(of: pid, inode), to: path, target: target,
                                    reason: "the mount ended while saving these bytes from the journal"),
                      stat(path, &info) == 0 else { return nil }
                return Leftover(target: target, path: path, size: Int(info.st_size))
            }
            unlink(Self.targetsPath(of: pid, in: folderPath))
            return leftovers
        }
    }

    /// How many entries of ended mounts wait in the journal of `library` (`shelf status`).
    public static func leftoverCount(library: URL) -> Int {
        let folder = folder(of: library)
        return endedProcesses(in: folder).reduce(0) { $0 + entries(of: $1, in: folder).count }
    }

    /// The entries set aside in the journal of `library`, each with where its bytes are and why
    /// they were not saved (`shelf status`).
    public static func setAside(library: URL) -> [(bytes: String, why: String)] {
        SetAside.list(in: folder(of: library))
    }

    private static func folder(of library: URL) -> String {
        library.appendingPathComponent("journal", isDirectory: true).path
    }

    /// The entries of process `pid`: the last target its targets file records for each inode
    /// whose bytes are there (a line torn by a crash is skipped).
    private static func entries(of pid: pid_t, in folder: String) -> [UInt64: Target] {
        let log = FileManager.default.contents(atPath: targetsPath(of: pid, in: folder)) ?? Data()
        var targets: [UInt64: Target] = [:]
        // Only whole lines: what follows the last newline is empty or torn by a crash.
        for line in String(decoding: log, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if let (inode, target) = Target.parse(line) { targets[inode] = target }
        }
        return targets.filter { FileManager.default.fileExists(atPath: bytesPath(of: pid, $0.key, in: folder)) }
    }

    /// The processes whose targets file is in the journal and that are no longer running.
    private static func endedProcesses(in folder: String) -> [pid_t] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.compactMap { name -> pid_t? in
            guard name.hasSuffix(".targets"), let pid = pid_t(name.dropLast(".targets".count)) else { return nil }
            return pid != getpid() && !ProcessStatus.isRunning(pid) ? pid : nil
        }.sorted()
    }
}

extension SaveJournal.Target {
    /// The line of a targets file that gives `inode` this target: `<inode> item <id> <base|->`
    /// or `<inode> new <path as hex>` (a file name may hold spaces and newlines).
    fileprivate func line(inode: UInt64) -> String {
        switch self {
        case .item(let id, let base): "\(inode) item \(id.rawValue) \(base.map(String.init) ?? "-")\n"
        case .newFile(let path): "\(inode) new \(path.utf8.map { String(format: "%02x", $0) }.joined())\n"
        }
    }

    /// The inode and target a line gives; nil for a line that is not one.
    fileprivate static func parse(_ line: Substring) -> (UInt64, Self)? {
        let fields = line.split(separator: " ")
        guard fields.count >= 3, let inode = UInt64(fields[0]) else { return nil }
        switch (fields[1], fields.count) {
        case ("item", 4):
            guard fields[3] == "-" || Int64(fields[3]) != nil else { return nil }
            return (inode, .item(ItemID(String(fields[2])), baseVersion: Int64(fields[3])))
        case ("new", 3):
            let hex = Array(fields[2].utf8)
            guard hex.count % 2 == 0 else { return nil }
            var bytes: [UInt8] = []
            for index in stride(from: 0, to: hex.count, by: 2) {
                guard let byte = UInt8(String(decoding: hex[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(byte)
            }
            return (inode, .newFile(path: String(decoding: bytes, as: UTF8.self)))
        default:
            return nil
        }
    }
}

/// `journal/set-aside/`: entries that could not be saved, each `<name>.bytes` (the bytes, as
/// written) beside `<name>.why` (where they were going and why they were not saved). Nothing
/// here is replayed again; a person decides (`shelf status` lists them).
private enum SetAside {
    /// A free path for entry `name` (numbered when an earlier entry of a reused pid has it).
    static func path(of name: String, in journal: String) -> String {
        var path = "\(journal)/set-aside/\(name).bytes"
        var number = 2
        while access(path, F_OK) == 0 {
            path = "\(journal)/set-aside/\(name)-\(number).bytes"
            number += 1
        }
        return path
    }

    /// Moves the entry at `from` to `path` with its explanation; false if it could not move.
    static func move(_ from: String, to path: String, target: SaveJournal.Target, reason: String) -> Bool {
        mkdir(String(path[..<path.lastIndex(of: "/")!]), 0o700)
        explain(path, target: target, reason: reason)
        guard rename(from, path) == 0 else {
            unlink(whyPath(of: path))
            return false
        }
        return true
    }

    static func explain(_ path: String, target: SaveJournal.Target, reason: String) {
        let text = "for: \(target.description)\nwhy: \(reason)\n"
        _ = FileManager.default.createFile(atPath: whyPath(of: path), contents: Data(text.utf8),
                                       attributes: [.posixPermissions: 0o600])
    }

    static func remove(_ path: String) {
        unlink(path)
        unlink(whyPath(of: path))
    }

    static func list(in journal: String) -> [(bytes: String, why: String)] {
        let folder = "\(journal)/set-aside"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".bytes") }.sorted().map { name in
            let path = "\(folder)/\(name)"
            let why = FileManager.default.contents(atPath: whyPath(of: path)).map { String(decoding: $0, as: UTF8.self) }
            return (path, why?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "why: unknown")
        }
    }

    private static func whyPath(of path: String) -> String {
        String(path.dropLast(".bytes".count)) + ".why"
    }
}

extension SaveJournal.Target: CustomStringConvertible {
    var description: String {
        switch self {
        case .item(let id, let base): "item \(id.rawValue)" + (base.map { " from version \($0)" } ?? "")
        case .newFile(let path): "new file \(path)"
        }
    }
}
