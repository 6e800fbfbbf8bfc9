import Foundation
import Synchronization
import ShelfStore

/// Item files created through the mount and not saved yet: they have a name (listed, looked
/// up, renamed) before the store knows them, under a placeholder identity, until their first
/// save decides which item they are.
final class NewItemFiles: Sendable {
    private let paths = Mutex<[UUID: MountPath]>([:])
    /// How each was created, which its item takes on at its first save.
    private let creations = Mutex<[UUID: Creation]>([:])

    struct Creation {
        /// The mode bits `open(O_CREAT)` asked for, the creator's umask applied.
        var permissions: UInt32
        /// Another user's, through a mount others may use; nil: the mount owner's.
        var owner: FileOwner?
    }

    /// Names a new file at `path`, created as `creation` says; returns its placeholder identity.
    func add(at path: MountPath, _ creation: Creation) -> UUID {
        let pending = UUID()
        paths.withLock { $0[pending] = path }
        creations.withLock { $0[pending] = creation }
        return pending
    }

    func creation(of pending: UUID) -> Creation? {
        creations.withLock { $0[pending] }
    }

    func path(of pending: UUID) -> MountPath? {
        paths.withLock { $0[pending] }
    }

    /// The new file at `path`, if any.
    func pending(at path: MountPath) -> UUID? {
        paths.withLock { $0.first { $0.value == path }?.key }
    }

    /// The file was renamed before its first save.
    func move(_ pending: UUID, to path: MountPath) {
        paths.withLock { $0[pending] = path }
    }

    /// The file was saved (it is an item now) or removed.
    func remove(_ pending: UUID) {
        paths.withLock { $0[pending] = nil }
        creations.withLock { $0[pending] = nil }
    }

    /// The names of the new files directly in `folder`.
    func names(in folder: MountPath) -> [(name: String, pending: UUID)] {
        paths.withLock { $0.filter { $0.value.parent == folder }.map { ($0.value.name, $0.key) } }
    }

    /// Whether a new file lies in `folder` or below it.
    func hasFiles(inside folder: MountPath) -> Bool {
        paths.withLock { $0.values.contains { $0.isInside(folder) } }
    }
}
