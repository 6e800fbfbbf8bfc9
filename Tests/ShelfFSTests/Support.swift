import Foundation
import Synchronization
import FuseKit
import TestSupport
import ShelfModel
import ShelfStore
import ShelfSync
import ShelfSystem
@testable import ShelfFS

/// A test library (TestSupport's ``TestLibrary``) that tests mount.
final class MountableLibrary: TestLibrary, @unchecked Sendable {
    /// The mount `withMount` is running, if any.
    private let mounted = Mutex<ShelfFuseOperations?>(nil)

    /// Mounts the library with the real kernel, runs `body`, and always unmounts.
    /// `idleSaveDelay`: long by default, so that only a writer's close (or `fsync`) saves in time
    /// for the test's checks, which is what the tests mean to show. `sync`: the engine of a
    /// linked library, which fills placeholders. `allowOther`: as `shelf mount --allow-other`.
    /// `lockTable`: where the mount reads the kernel's file locks.
    func withMount<T>(idleSaveDelay: TimeInterval = 60, sync: SyncEngine? = nil, downloadTimeout: Duration = .seconds(10),
                      allowOther: Bool = false, lockTable: String = KernelFileLocks.table,
                      _ body: (TestMount) throws -> T) throws -> T {
        let operations = try ShelfFuseOperations(store: store, idleSaveDelay: idleSaveDelay, sync: sync,
                                                 downloadTimeout: downloadTimeout, lockTable: lockTable)
        mounted.withLock { $0 = operations }
        defer { mounted.withLock { $0 = nil } }
        if allowOther { try operations.letOtherUsersIn() }
        let options = ShelfFuseOperations.mountOptions(filesystemName: "shelf-test", allowOther: allowOther)
        return try TestMount.withMount(operations, options: options) { mount in
            operations.attach(to: mount.session, at: mount.mountpoint)
            return try body(mount)
        }
    }

    /// Waits until the mount has saved every write it received: the saves follow each writer's
    /// close on their own thread, a moment after the program that wrote has exited.
    /// Waits until `count` read requests of the mount `withMount` runs wait for downloads: the
    /// readers are blocked in the mount, not still starting.
    func waitUntilReadersWait(_ count: Int) -> Bool {
        eventually(within: .seconds(10)) { mounted.withLock { $0 }?.fileSystem.parts.downloads.waitingReaders == count }
    }

    /// Whether the mount `withMount` runs holds bytes written to a file and not saved yet.
    func hasUnsavedBytes() -> Bool {
        mounted.withLock { $0 }?.fileSystem.saves.buffers.unsavedInodes().isEmpty == false
    }

    func waitUntilSaved() throws {
        guard mounted.withLock({ $0 })?.waitUntilSaved(timeout: .seconds(5)) != false else {
            throw SavesPending()
        }
    }
}

extension TestMount {
    /// Runs `script` in the mountpoint and returns its standard output; throws with the whole
    /// result when it fails.
    @discardableResult
    func sh(_ script: String, timeout: Duration = .seconds(10)) throws -> String {
        let result = try shell(script, timeout: timeout)
        guard result.succeeded else { throw ScriptFailed(script: script, result: result) }
        return result.stdout
    }

    func bytes(_ relative: String) throws -> [UInt8] {
        let path = path(relative)
        return try perform { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
    }

    func text(_ relative: String) throws -> String {
        String(decoding: try bytes(relative), as: UTF8.self)
    }
}

struct SavesPending: Error, CustomStringConvertible {
    var description: String { "the mount did not save the writes it received within 5 s" }
}

struct ScriptFailed: Error, CustomStringConvertible {
    var script: String
    var result: CommandResult
    var description: String { "`\(script)` failed: \(result)" }
}
