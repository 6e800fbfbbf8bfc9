import Foundation
import ShelfModel
import ShelfSystem

/// A library's save journal as files (`journal/`), the format both the mount that writes it
/// (`SaveJournal`) and `shelf status` that reports it read.
///
/// Each item file with unsaved writes has `<pid>-<inode>.bytes`, the bytes the file shows;
/// where each entry's bytes are to be saved is a line in the process's `<pid>.targets`,
/// appended to (the last line of an inode wins). `set-aside/` holds entries that could not be
/// saved, each `<name>.bytes` beside `<name>.why` (where they were going and why they were not
/// saved). Nothing there is replayed again; a person decides (`shelf status` lists them).
public struct JournalFolder: Sendable {
    public let path: String

    public init(library: URL) {
        path = LibraryLayout(folder: library).journal.path
    }

    /// Where a journal entry's bytes are saved.
    public enum Target: Equatable, Sendable {
        /// An existing item, as of the version its bytes started from.
        case item(ItemID, baseVersion: Int64?)
        /// A file created through the mount that is no item yet.
        case newFile(path: String)
    }

    package func bytesPath(of pid: pid_t, _ inode: UInt64) -> String {
        "\(path)/\(pid)-\(inode).bytes"
    }

    package func targetsPath(of pid: pid_t) -> String {
        "\(path)/\(pid).targets"
    }

    /// How many entries of ended mounts wait to be replayed (`shelf status`).
    public var leftoverCount: Int {
        endedProcesses().reduce(0) { $0 + entries(of: $1).count }
    }

    /// The entries of process `pid`: the last target its targets file records for each inode
    /// whose bytes are there (a line torn by a crash is skipped).
    package func entries(of pid: pid_t) -> [UInt64: Target] {
        let log = FileManager.default.contents(atPath: targetsPath(of: pid)) ?? Data()
        var targets: [UInt64: Target] = [:]
        // Only whole lines: what follows the last newline is empty or torn by a crash.
        for line in String(decoding: log, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if let (inode, target) = Target.parse(line) { targets[inode] = target }
        }
        return targets.filter { FileManager.default.fileExists(atPath: bytesPath(of: pid, $0.key)) }
    }

    /// The processes whose targets file is in the journal and that are no longer running.
    package func endedProcesses() -> [pid_t] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.compactMap { name -> pid_t? in
            guard name.hasSuffix(".targets"), let pid = pid_t(name.dropLast(".targets".count)) else { return nil }
            return pid != ProcessInfo.processInfo.processIdentifier && !ProcessStatus.isRunning(pid) ? pid : nil
        }.sorted()
    }

    // MARK: Set aside

    /// The entries set aside, each with where its bytes are and why they were not saved.
    public func setAside() -> [(bytes: String, why: String)] {
        let folder = "\(path)/set-aside"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".bytes") }.sorted().map { name in
            let bytes = "\(folder)/\(name)"
            let why = FileManager.default.contents(atPath: Self.whyPath(of: bytes)).map { String(decoding: $0, as: UTF8.self) }
            return (bytes, why?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "why: unknown")
        }
    }

    /// A free path in `set-aside/` for entry `name` (numbered when an earlier entry of a reused
    /// pid has it).
    package func setAsidePath(of name: String) -> String {
        var candidate = "\(path)/set-aside/\(name).bytes"
        var number = 2
        while FileManager.default.fileExists(atPath: candidate) {
            candidate = "\(path)/set-aside/\(name)-\(number).bytes"
            number += 1
        }
        return candidate
    }

    /// Moves the entry at `from` to `aside` with its explanation; false if it could not move.
    package func move(_ from: String, aside: String, target: Target, reason: String) -> Bool {
        try? FileManager.default.createDirectory(atPath: String(aside[..<aside.lastIndex(of: "/")!]),
                                                 withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        explain(aside, target: target, reason: reason)
        do {
            try FileEntries.rename(from, to: aside)
            return true
        } catch {
            try? FileEntries.removeFile(Self.whyPath(of: aside))
            return false
        }
    }

    /// Writes why the entry set aside at `aside` was not saved.
    package func explain(_ aside: String, target: Target, reason: String) {
        let text = "for: \(target.description)\nwhy: \(reason)\n"
        _ = FileManager.default.createFile(atPath: Self.whyPath(of: aside), contents: Data(text.utf8),
                                           attributes: [.posixPermissions: 0o600])
    }

    /// Removes the entry set aside at `aside`, with its explanation.
    package func removeAside(_ aside: String) {
        try? FileEntries.removeFile(aside)
        try? FileEntries.removeFile(Self.whyPath(of: aside))
    }

    private static func whyPath(of bytes: String) -> String {
        String(bytes.dropLast(".bytes".count)) + ".why"
    }
}

extension JournalFolder.Target: CustomStringConvertible {
    public var description: String {
        switch self {
        case .item(let id, let base): "item \(id.rawValue)" + (base.map { " from version \($0)" } ?? "")
        case .newFile(let path): "new file \(path)"
        }
    }

    /// The line of a targets file that gives `inode` this target: `<inode> item <id> <base|->`
    /// or `<inode> new <path as hex>` (a file name may hold spaces and newlines).
    package func line(inode: UInt64) -> String {
        switch self {
        case .item(let id, let base): "\(inode) item \(id.rawValue) \(base.map(String.init) ?? "-")\n"
        case .newFile(let path): "\(inode) new \(path.utf8.map { String(format: "%02x", $0) }.joined())\n"
        }
    }

    /// The inode and target a line gives; nil for a line that is not one.
    package static func parse(_ line: Substring) -> (UInt64, Self)? {
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
