import Foundation
import Synchronization
import FuseKit

/// The folders of the plain-file area that hold items: made on demand (an item moved by the
/// CLI into a new shelf needs its folder to be listable), watched for writers' closes, and a
/// count of namespace changes that stamps cached listings.
final class ItemFolders: Sendable {
    private let plain: PlainFileArea
    /// The session's close watcher, once mounted: new item folders are watched as they appear.
    private let closeWatcher = Mutex<CloseWatcher?>(nil)
    /// Counts namespace changes of the plain-file area (everything made under the namespace
    /// lock, and folders made for items).
    private let changes = Atomic<UInt64>(0)

    init(plain: PlainFileArea) {
        self.plain = plain
    }

    /// Has `closeWatcher` report closes in every item folder from now on, to `handler`.
    func watch(with closeWatcher: CloseWatcher, handler: @escaping CloseWatcher.Handler) {
        self.closeWatcher.withLock { $0 = closeWatcher }
        closeWatcher.onEvent(handler)
        for folder in plain.itemFolders() { closeWatcher.watch(folder: folder.rawValue) }
    }

    /// Delivers the closes the kernel has queued so far (see ``CloseWatcher/drain(timeout:)``);
    /// true when not mounted, as there is nothing to deliver.
    func deliverQueuedCloses() -> Bool {
        closeWatcher.withLock { $0 }?.drain() ?? true
    }

    /// Creates `folder` and its parents if missing, and watches them for closes. Returns the
    /// folders it created, outermost first.
    @discardableResult
    func ensure(_ folder: MountPath) throws -> [MountPath] {
        var missing: [MountPath] = []
        var ancestor = folder
        while !ancestor.isRoot, !plain.isDirectory(ancestor) {
            missing.append(ancestor)
            ancestor = ancestor.parent
        }
        guard !missing.isEmpty else { return [] }
        defer { noteNamespaceChange() }
        try FileManager.default.createDirectory(atPath: plain.realPath(folder), withIntermediateDirectories: true)
        for created in missing.reversed() { watchForCloses(created) }
        return missing.reversed()
    }

    /// Has the close watcher report closes of files in `folder` if items live there.
    func watchForCloses(_ folder: MountPath) {
        guard PathRules.isItemFolder(folder) else { return }
        closeWatcher.withLock { $0 }?.watch(folder: folder.rawValue)
    }

    /// A name of the plain-file area may have come, gone or moved.
    func noteNamespaceChange() {
        changes.add(1, ordering: .relaxed)
    }

    /// The count of namespace changes so far.
    var namespaceGeneration: UInt64 { changes.load(ordering: .relaxed) }
}
