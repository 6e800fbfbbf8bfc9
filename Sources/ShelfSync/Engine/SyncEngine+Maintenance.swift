import Foundation
import ShelfModel
import ShelfStore

extension SyncEngine {
    // MARK: Keeping the cloud small

    /// What one maintenance removed.
    public struct Maintenance: Equatable, Sendable {
        public var snapshotWritten = false
        public var batchesRemoved = 0
        public var contentRemoved = 0
    }

    /// Tells the cloud how far this device has read, writes a snapshot once `snapshotEvery`
    /// batches happened since the newest one, and removes what no device needs any more: logs
    /// every device that is not retired has read and a snapshot covers (this device's own, and
    /// retired devices'), and bytes that no remaining change has or was made on top of, that no
    /// item here holds and that were not used for `unusedFor`. A device that never reports
    /// (lost, never synced) holds removal back until `shelf cloud forget-device` retires it.
    @discardableResult
    public func maintainCloud(snapshotEvery: Int = 500, unusedFor: TimeInterval = 86_400) throws -> Maintenance {
        try withRoundLock {
            try checkIdentity()
            return try CloudMaintenance(engine: self).run(snapshotEvery: snapshotEvery, unusedFor: unusedFor)
        }
    }

    /// Retires the device named `name` (a lost laptop), or with that id (one whose record is
    /// damaged too): it no longer holds back the removal of logs. Throws when no device, or more
    /// than one, has that name.
    public func forgetDevice(named name: String) throws {
        let devices = try cloud.devices()
        let matches = devices.readable.filter { $0.name == name || $0.id == name }.map(\.id)
            + devices.damaged.filter { $0 == name }
        guard matches.count == 1, let id = matches.first else {
            throw SyncError.noSuchDevice(name: name, known: devices.readable.map { "\($0.name) (\($0.id))" }
                                                            + devices.damaged.sorted().map { "\($0) (its record is damaged)" })
        }
        guard id != (try requireLink().device) else { throw SyncError.cannotForgetItself }
        try cloud.retire(id)
    }
}
