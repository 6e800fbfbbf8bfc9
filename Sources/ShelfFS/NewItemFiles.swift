import Foundation
import Synchronization

/// Item files created through the mount and not saved yet: they have a name (listed, looked
/// up, renamed) before the store knows them, under a placeholder identity, until their first
/// save decides which item they are.
final class NewItemFiles: Sendable {
    private let paths = Mutex<[UUID: MountPath]>([:])
    /// The mode bits each was created with, which its item takes on.
    private let modes = Mutex<[UUID: UInt32]>([:])

    /// Names a new file at `path`, created with mode bits `permissions`; returns its
    /// placeholder identity.
    func add(at path: MountPath, permissions: UInt32) -> UUID {
        let pending = UUID()
        paths.withLock { $0[pending] = path }
        modes.withLock { $0[pending] = permissions }
        return pending
    }

    func permissions(of pending: UUID) -> UInt32? {
        modes.withLock { $0[pending] }
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
        modes.withLock { $0[pending] = nil }
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
