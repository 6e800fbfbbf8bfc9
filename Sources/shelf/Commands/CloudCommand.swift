import ArgumentParser
import Foundation
import Logging
import ShelfStore
import ShelfSync

struct CloudCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloud",
        abstract: "Link the library to a cloud copy that several devices share, and see how sync is doing.",
        subcommands: [Link.self, Unlink.self, Status.self, Passphrase.self, Encrypt.self, ForgetDevice.self, Compact.self,
                      SetupSQL.self])

    struct Link: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Link the library to a cloud: a folder, or a PostgreSQL server. A new or empty one becomes a new cloud; one holding a cloud is joined.",
            discussion: """
                A folder may be local, on a network share, or carried between machines by a \
                file-sync tool (Syncthing, Nextcloud, Dropbox). A PostgreSQL cloud is \
                postgres://USER@HOST[:PORT]/DATABASE[?sslmode=require|verify-full&cloud=NAME]; \
                the password comes from PGPASSWORD or ~/.pgpass, never from the address. The \
                first sync brings the cloud's items here and uploads this library's. A cloud \
                that a file-sync tool is still bringing is waited for (--join: even in an \
                empty folder); two devices that each made a cloud in one shared folder are \
                joined into one when they meet.
                """)
        @OptionGroup var library: LibraryOptions
        @Argument(help: ArgumentHelp("The cloud folder, or a postgres:// address.", valueName: "DIR|URL"))
        var location: String
        @Option(help: "This device's name, shown in conflict copies (default: the host name).")
        var device: String = ProcessInfo.processInfo.hostName
        @Option(help: ArgumentHelp("`all`: download every item's bytes as they arrive, not on first read.", valueName: "all"))
        var download: DownloadPolicy?

        enum DownloadPolicy: String, ExpressibleByArgument { case all }
        @Option(help: ArgumentHelp("Keep at most this much downloaded (`500M`, `2G`); the least recently read items are evicted first.",
                                   valueName: "SIZE"))
        var cacheLimit: ByteCount?
        @Flag(help: "Join the cloud another device made, waiting for a file-sync tool to bring it; never make a new one here.")
        var join = false
        @Option(help: ArgumentHelp("How long to wait for a cloud on its way, in seconds.", valueName: "SECONDS"))
        var wait: Double = 600
        @Flag(help: "Make the new cloud encrypted: everything in it sealed with a key only its devices hold.")
        var encrypt = false
        @OptionGroup var passphrase: PassphraseOptions

        func run() throws {
            let store = try library.open()
            // A mount decides whether to sync when it starts.
            try ShelfMounts.requireUnmounted(store, next: "link, then mount it again to sync while mounted")
            let cloud = try CloudLocation.backend(location)
            let link = try CloudLinking.link(store, to: cloud, deviceName: device, downloadAll: download == .all,
                                           cacheLimit: cacheLimit?.bytes, join: join, encrypt: encrypt,
                                           passphrase: { $0 == .choose ? try passphrase.readNew() : try passphrase.read() },
                                           wait: wait) { progress in
                FileHandle.standardError.write(Data((progress + "\n").utf8))
            }
            if let recovery = link.recoveryKey { RecoveryNotice.show(recovery) }
            let report = try SyncEngine(store: store, cloud: link.cloud).sync()
            print("Linked to the cloud at \(link.state.location) as \(link.state.deviceName): \(report.pulled) changes in, \(report.pushed) items uploaded.")
        }
    }

    struct Unlink: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop syncing with the cloud; every item stays in this library (items not downloaded yet are downloaded first).")
        @OptionGroup var library: LibraryOptions

        func run() throws {
            let store = try library.open()
            let location = try store.cloudLink()?.location
            do {
                try Downloads.fetch(of: store)
            } catch {
                throw CLIError("not unlinked: items not downloaded yet would have nowhere to come from. \(error)")
            }
            try CloudLinking.unlink(store)
            print("Unlinked from the cloud at \(location ?? "?"); the library keeps every item.")
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The cloud, this device, online or not, what waits to be uploaded.")
        @OptionGroup var library: LibraryOptions
        @Flag(help: "Print the status as one JSON object.")
        var json = false

        func run() throws {
            let store = try library.open()
            guard let status = try SyncStatus.of(store) else {
                throw CLIError("this library is not linked to a cloud; link it with `shelf cloud link DIR`.")
            }
            if json { return FileHandle.standardOutput.write(try status.encoded()) }
            print("Cloud:    \(status.cloud)")
            print("Device:   \(status.device)")
            print("Encrypted: \(status.encrypted ? "yes" : "no")")
            print("Online:   \(status.online ? "yes" : "no, since \(status.offlineSince.map(Self.format) ?? "?")")")
            print("Last sync: \(status.lastSync.map(Self.format) ?? "never")")
            print("Waiting to upload: \(status.pendingUploads) item\(status.pendingUploads == 1 ? "" : "s")")
            print("Not downloaded: \(status.notDownloaded) item\(status.notDownloaded == 1 ? "" : "s") (downloaded on first read)")
            print("Held here: \(status.cacheBytes) bytes\(status.cacheLimitBytes.map { " of at most \($0)" } ?? "")")
            if ShelfMounts.mountpoints(ofLibrary: store.folder).isEmpty {
                print("Transfers: none now (the library is not mounted; `shelf sync` and `shelf mount` move items)")
            } else {
                print("Since the mount started: \(status.downloads) downloads, \(status.uploads) uploads")
            }
            if let waiting = status.waiting { print("Held back: \(waiting)") }
            if let error = status.error { print("Error:    \(error)") }
        }

        private static func format(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
    }
}

extension CloudCommand {
    struct SetupSQL: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "setup-sql",
            abstract: "Print the SQL a PostgreSQL administrator runs to make a place for a cloud: its login role and its own schema.",
            discussion: "Run it with psql in the cloud's database, then set the role's password (psql: \\password NAME).")
        @Argument(help: "The cloud's name, which is also its role's name.")
        var name: String

        func run() throws {
            print(try PostgresCloud.setupSQL(cloud: name), terminator: "")
        }
    }

    struct ForgetDevice: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "forget-device",
            abstract: "Retire a device that will not sync again (lost, wiped, or one that is not yours), so the cloud can drop what only it still needed.",
            discussion: "Its changes that keep the cloud's rules stay; its batches that break them (`shelf cloud status` names them) are passed over at the next sync; logs every other device has read go once a snapshot covers them.")
        @OptionGroup var library: LibraryOptions
        @Argument(help: "The device's name (or id: when two share a name, or its record is damaged).")
        var device: String

        func run() throws {
            let (_, engine) = try DownloadControl.open(library)
            try engine.forgetDevice(named: device)
            let report = try engine.maintainCloud()
            print("Forgot \(device); \(report.batchesRemoved) log files and \(report.contentRemoved) unused contents removed.")
        }
    }

    struct Compact: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a snapshot now and remove what no device needs any more (a mounted library does this hourly).")
        @OptionGroup var library: LibraryOptions

        func run() throws {
            let (_, engine) = try DownloadControl.open(library)
            let report = try engine.maintainCloud(snapshotEvery: 1)
            print("\(report.snapshotWritten ? "Snapshot written; " : "")\(report.batchesRemoved) log files and \(report.contentRemoved) unused contents removed.")
        }
    }
}

extension SyncStatus {
    /// The library's sync status: from its mount when mounted (which counts the mount's
    /// downloads and uploads), else from the library; nil when not linked.
    static func of(_ store: LibraryStore) throws -> SyncStatus? {
        for mountpoint in ShelfMounts.mountpoints(ofLibrary: store.folder) {
            if let json = FileManager.default.contents(atPath: mountpoint + "/.shelf/sync.json"),
               let status = try? SyncStatus.decoded(from: json) { return status }
        }
        return try SyncEngine.linked(store)?.status()
    }
}

struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Bring other devices' changes here and send this library's to the cloud.",
        discussion: "A mounted library syncs by itself; this runs a round now — through the mount when mounted (one round at a time per library, whoever starts it).")
    @OptionGroup var library: LibraryOptions
    @Flag(help: "Keep syncing until interrupted.")
    var watch = false
    @Option(help: ArgumentHelp("Seconds between rounds with --watch.", valueName: "SECONDS"))
    var pollInterval: Double = 1

    func run() throws {
        let store = try library.open()
        guard let link = try store.cloudLink(), let engine = try SyncEngine.linked(store) else {
            throw CLIError("this library is not linked to a cloud; link it with `shelf cloud link DIR`.")
        }
        guard watch else {
            // A mounted library syncs through its mount, whose view then shows the round at once.
            if let answer = MountControl.sync(library: store.folder) {
                guard answer.hasPrefix("ok") else { throw CLIError("the mount could not sync: \(answer.dropFirst(6))") }
                print("Synced with \(link.location) (through the mount): \(answer.dropFirst(3)).")
                return
            }
            let report = try engine.sync()
            print("Synced with \(link.location): \(report.pulled) changes in, \(report.pushed) out.")
            return
        }
        // Rounds end whole or not at all, so Ctrl-C may stop this at any moment.
        SyncRunner(engine: engine, interval: pollInterval, logger: Logger(label: "shelf.sync")).start()
        while true { Thread.sleep(forTimeInterval: 3600) }
    }
}

/// A size on the command line: `1500`, `500K`, `20M`, `2G` (powers of 1024).
struct ByteCount: ExpressibleByArgument {
    let bytes: Int

    init?(argument: String) {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        let unit = argument.last.flatMap { units[Character($0.uppercased())] }
        guard let number = Double(unit == nil ? argument : String(argument.dropLast())), number >= 0 else { return nil }
        bytes = Int(number * Double(unit ?? 1))
    }
}
