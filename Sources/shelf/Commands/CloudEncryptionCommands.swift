import ArgumentParser
import Foundation
import ShelfStore
import ShelfSync

extension CloudCommand {
    struct Passphrase: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change the passphrase of the encrypted cloud this library is linked to.",
            discussion: """
                The new passphrase comes from --passphrase-file (or SHELF_CLOUD_PASSPHRASE_FILE), \
                or is typed twice. Only the cloud's wrapped key changes, nothing is encrypted \
                again: every linked device keeps syncing (an offline one too), and a device that \
                links from now on needs the new passphrase (or the recovery key, which still \
                opens the cloud). It may run while the library is mounted.
                """)
        @OptionGroup var library: LibraryOptions
        @OptionGroup var passphrase: PassphraseOptions

        func run() throws {
            let store = try library.open()
            guard let link = try store.cloudLink() else { throw SyncError.notLinked }
            // Said before the new passphrase is asked for.
            guard DeviceCloudKey.isHeld(by: store) else { throw SyncError.notEncryptedHere }
            let cloud = try CloudLocation.backend(link.location)
            try CloudLinking.changePassphrase(of: store, in: cloud, to: try passphrase.readNew())
            print("Changed the passphrase of the cloud at \(link.location). Its devices keep syncing; a device that links from now on needs the new passphrase.")
        }
    }

    struct Encrypt: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move this library from its plain cloud to a new encrypted cloud, which it seeds.",
            discussion: """
                A cloud never changes once written, so this makes a new, encrypted one at DIR|URL \
                (a new or empty folder, or a new PostgreSQL cloud: `shelf cloud setup-sql`): items \
                not downloaded yet are downloaded first, this library is linked to the new cloud, \
                uploads every item and writes a snapshot, from which devices that link later start. \
                The other devices then `shelf cloud unlink` and `shelf cloud link DIR|URL` with the \
                passphrase. The old cloud is left as it was, for you to delete once every device \
                moved. The library must not be mounted.
                """)
        @OptionGroup var library: LibraryOptions
        @Argument(help: ArgumentHelp("Where to make the new cloud: a new or empty folder, or a postgres:// address.",
                                     valueName: "DIR|URL"))
        var location: String
        @Option(help: ArgumentHelp("This device's name in the new cloud (default: its name in the old one).", valueName: "NAME"))
        var device: String?
        @OptionGroup var passphrase: PassphraseOptions

        func run() throws {
            let store = try library.open()
            try ShelfMounts.requireUnmounted(store, next: "encrypt, then mount it again")
            let cloud = try CloudLocation.backend(location)
            let old = try CloudLinking.checkMoveToEncryptedCloud(store, at: cloud)
            let secret = try passphrase.readNew()
            do {
                try Downloads.fetch(of: store)
            } catch {
                throw CLIError("not moved: items not downloaded yet would have nowhere to come from. \(error)")
            }
            let moved = try CloudLinking.moveToEncryptedCloud(store, at: cloud, deviceName: device, passphrase: secret)
            if let recovery = moved.recoveryKey { RecoveryNotice.show(recovery) }
            let engine = SyncEngine(store: store, cloud: moved.cloud)
            let report: SyncEngine.Report
            do {
                report = try engine.sync()
                try engine.maintainCloud(snapshotEvery: 1)
            } catch {
                throw CLIError("this library is linked to the new encrypted cloud at \(moved.state.location), but its upload stopped: \(error) Run `shelf sync`, then `shelf cloud compact`, before the other devices move.")
            }
            print("""
                Moved to the new encrypted cloud at \(moved.state.location) as \(moved.state.deviceName): \(report.pushed) items uploaded, and a snapshot for the devices that link later.
                On every other device: `shelf cloud unlink`, then `shelf cloud link \(moved.state.location)` with the passphrase.
                The old cloud at \(old.location) is left as it was; once every device has moved, \(Self.deletion(of: old.location)).
                """)
        }

        /// How the user deletes the cloud left behind.
        private static func deletion(of location: String) -> String {
            guard PostgresAddress.isAddress(location) else { return "delete its folder" }
            let schema = (try? PostgresAddress(location).cloud) ?? "its schema"
            return "its PostgreSQL administrator drops it (`DROP SCHEMA \(schema) CASCADE;`, and its role)"
        }
    }
}

/// The recovery key of a cloud just made, shown once: nowhere else keeps it.
enum RecoveryNotice {
    static func show(_ key: RecoveryKey) {
        print("The cloud is encrypted. Its recovery key, shown this once, also opens it if the passphrase is lost; keep it apart from this device:\n\n    \(key.text)\n")
    }
}
