import Foundation
import Synchronization

/// The scratch folders one running test made (``TemporaryFolder``s, the CLI tests' folders): the
/// `ScratchFolders` trait opens a scope per test case, removes its folders when the test passes
/// and keeps and names them when it fails. A folder made outside a scope goes away with its
/// owner. `SHELF_KEEP_SCRATCH` keeps every folder (a soak chasing a rare failure).
public final class ScratchScope: Sendable {
    /// The running test's scope, found through a task local (tests run in parallel).
    @TaskLocal public static var current: ScratchScope?

    private let folders = Mutex<[URL]>([])
    private let failed = Mutex(false)

    public init() {}

    /// Whether `SHELF_KEEP_SCRATCH` asks for every scratch folder to stay.
    public static var keepsEverything: Bool { ProcessInfo.processInfo.environment["SHELF_KEEP_SCRATCH"] != nil }

    /// Hands `folder` to the running test's scope, which removes or keeps it when the test ends;
    /// false outside a scope (the caller removes it itself).
    public static func adopt(_ folder: URL) -> Bool {
        guard let current else { return false }
        current.folders.withLock { $0.append(folder) }
        return true
    }

    /// The test failed (an issue recorded, or an error thrown): its folders stay.
    public func markFailed() { failed.withLock { $0 = true } }

    /// Ends the scope: removes its folders after a pass, or keeps them. Returns the folders kept,
    /// and whether for a failure, for the trait to name.
    public func finish() -> (kept: [URL], becauseFailed: Bool) {
        let folders = folders.withLock { $0 }
        let failed = failed.withLock { $0 }
        if failed || Self.keepsEverything { return (folders, failed) }
        for folder in folders { Self.remove(folder) }
        return ([], false)
    }

    /// Removes `folder` once no program working in it is left — a mount daemon still pushing
    /// after its unmount would write the folder again — with `rm -rf` where Foundation cannot
    /// (a tree deeper than `PATH_MAX`, which the long-path tests make).
    public static func remove(_ folder: URL) {
        _ = ProcessProbe.waitUntilGone(namingInCommandLine: folder.path, within: .seconds(20))
        do {
            try FileManager.default.removeItem(at: folder)
        } catch {
            _ = try? CommandRunner.run("/bin/rm", ["-rf", folder.path], in: "/", timeout: .seconds(60))
        }
    }
}
