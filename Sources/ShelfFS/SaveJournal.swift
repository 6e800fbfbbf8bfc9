import Foundation
import Glibc
import FuseKit
import ShelfModel

/// Unsaved writes to item files, mirrored into the library as they arrive, so a crash of the
/// mount loses nothing the kernel handed over.
///
/// With stateless opens the mount learns of a writer's close only a moment after it returned,
/// and commits then; a daemon killed meanwhile would drop those bytes. So each item file with
/// unsaved writes has a journal entry in `<library>/journal/`: `<pid>-<inode>.bytes`, the bytes
/// the file shows, kept equal to them write by write, and `<pid>-<inode>.json`, where they are
/// to be saved. Like a disk filesystem's page cache, entries are not synced per write: they
/// survive the process, and `fsync` of the file commits them to the store. An entry ends when
/// its bytes are committed; entries of a process that died are replayed by the next mount.
/// A journal write that fails (a full disk) fails the program's write, before the bytes change.
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
        fileprivate let name: String
        fileprivate let descriptor: Int32

        fileprivate init(name: String, descriptor: Int32) {
            self.name = name
            self.descriptor = descriptor
        }
    }

    /// An entry left by a mount that ended without committing it.
    struct Leftover {
        var target: Target
        var bytes: [UInt8]
        /// Removes the entry (once its bytes are committed).
        var remove: () -> Void
    }

    let folder: URL

    init(library: URL) throws {
        folder = library.appendingPathComponent("journal", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    /// Starts the entry of `inode`, holding `bytes`, to be saved into `target`.
    func begin(_ inode: UInt64, target: Target, bytes: [UInt8]) throws(Errno) -> Entry {
        let name = "\(getpid())-\(inode)"
        let path = folder.appendingPathComponent(name + ".bytes").path
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .current }
        let entry = Entry(name: name, descriptor: descriptor)
        do {
            try write(bytes, at: 0, to: entry)
            try retarget(entry, to: target)
        } catch {
            end(entry)
            throw error
        }
        return entry
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

    /// Records where `entry`'s bytes go from now on (written through a temp name and a rename,
    /// so a crash leaves the old target or the new one).
    func retarget(_ entry: Entry, to target: Target) throws(Errno) {
        let fields: [String: Any] = switch target {
        case .item(let id, let base): ["item": id.rawValue, "baseVersion": base.map { NSNumber(value: $0) } ?? NSNull()]
        case .newFile(let path): ["newFile": path]
        }
        guard let json = try? JSONSerialization.data(withJSONObject: fields) else { throw Errno.ioError }
        let final = folder.appendingPathComponent(entry.name + ".json").path
        let temporary = final + ".tmp"
        let descriptor = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .current }
        let written = json.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let error = errno
        close(descriptor)
        guard written == json.count else {
            unlink(temporary)
            throw Errno(written < 0 ? error : ENOSPC)
        }
        guard rename(temporary, final) == 0 else { throw .current }
    }

    /// Ends `entry`: its bytes are committed (or no longer wanted).
    func end(_ entry: Entry) {
        close(entry.descriptor)
        for suffix in [".json", ".bytes"] { unlink(folder.appendingPathComponent(entry.name + suffix).path) }
    }

    /// Entries of mount processes that are no longer running, oldest process first.
    func leftovers() -> [Leftover] {
        Self.leftoverNames(in: folder).compactMap { name in
            let base = folder.appendingPathComponent(name)
            guard let json = FileManager.default.contents(atPath: base.path + ".json"),
                  let fields = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else { return nil }
            let target: Target
            if let id = fields["item"] as? String {
                target = .item(ItemID(id), baseVersion: (fields["baseVersion"] as? NSNumber)?.int64Value)
            } else if let path = fields["newFile"] as? String {
                target = .newFile(path: path)
            } else {
                return nil
            }
            let bytes = FileManager.default.contents(atPath: base.path + ".bytes").map(Array.init) ?? []
            let folder = self.folder
            return Leftover(target: target, bytes: bytes) {
                for suffix in [".json", ".bytes"] { unlink(folder.appendingPathComponent(name + suffix).path) }
            }
        }
    }

    /// How many entries of ended mounts wait in the journal of `library` (`shelf status`).
    public static func leftoverCount(library: URL) -> Int {
        leftoverNames(in: library.appendingPathComponent("journal", isDirectory: true)).count
    }

    /// `<pid>-<inode>` of every entry whose process is gone.
    private static func leftoverNames(in folder: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.filter { name in
            guard let pid = name.split(separator: "-").first.flatMap({ pid_t($0) }) else { return false }
            return pid != getpid() && !ProcessStatus.isRunning(pid)
        }.sorted()
    }
}
