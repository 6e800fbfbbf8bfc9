import Foundation
import Logging
import Synchronization
import FuseKit
import ShelfModel
import ShelfStore
import ShelfSystem

/// Brings changes made outside this mount (the CLI, an import, another mount, sync) into the
/// kernel's view: a thread reads the store's change feed whenever the library's database
/// changes (``FolderChangeSignal``; at least every `fallback` interval) and hands each changed
/// item to the ``MountView``, which records it in the index and shows it to the kernel.
final class ChangeFollower: Sendable {
    private let view: MountView
    private let store: LibraryStore
    private let downloads: PlaceholderDownloads
    private let logger: Logger
    private let fallback: TimeInterval
    /// Made when the thread starts: a file system that is never mounted holds no inotify
    /// instance (a user has 128 at most).
    private let signal = Mutex<FolderChangeSignal?>(nil)
    private let sequence: Mutex<Int64>
    /// How many times the feed was read: an idle mount reads it rarely.
    let feedReads = Atomic<Int>(0)
    private let worker = WorkerThread(name: "shelf.change-follower")

    /// Follows `fileSystem`'s library from the feed position its index was loaded at.
    init(fileSystem: ShelfFileSystem, fallback: TimeInterval = 5) {
        view = fileSystem.parts.view
        store = fileSystem.parts.store
        downloads = fileSystem.parts.downloads
        logger = fileSystem.parts.logger
        sequence = Mutex(fileSystem.loadedSequence)
        self.fallback = fallback
    }

    func start() {
        let signal = signal.withLock { signal in
            if signal == nil { signal = FolderChangeSignal.library(store.folder) }
            return signal!
        }
        worker.start { [self] in followUntilStopped(signal) }
    }

    /// Stops the thread and waits for its last poll to end.
    func stop() {
        worker.stop { signal.withLock { $0 }?.wakeUp() }
    }

    private func followUntilStopped(_ signal: FolderChangeSignal) {
        repeat {
            do {
                try poll()
            } catch {
                logger.error("cannot read the library's change feed: \(error)")
            }
            // Waits for the library to change (or the fallback interval).
            signal.wait(fallback: fallback, settle: 0.01)
        } while !worker.isStopping
    }

    /// Applies every change since the last poll; returns how many there were.
    @discardableResult
    func poll() throws -> Int {
        let after = sequence.withLock { $0 }
        feedReads.add(1, ordering: .relaxed)
        let changes = try store.changes(after: after)
        guard let last = changes.last else { return 0 }
        var seen = Set<ItemID>()
        for change in changes where seen.insert(change.id).inserted {
            guard let recorded = try view.recordFromStore(change.id) else { continue }
            // A newer placeholder state: bytes fetched for the one it replaced are not its.
            if recorded.current?.isPlaceholder == true { downloads.discard(change.id) }
            view.show(recorded)
        }
        sequence.withLock { $0 = last.sequence }
        return changes.count
    }
}
