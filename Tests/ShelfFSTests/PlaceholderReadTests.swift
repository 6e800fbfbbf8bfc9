import Foundation
import Testing
import TestDevices
import TestSupport
import TestTraits
import ShelfModel
import ShelfStore
@testable import ShelfSync
@testable import ShelfFS
import ShelfSystem

/// A cloud whose downloads wait until `release()`: what a slow or stalled network looks like.
final class StalledCloud: CloudBackend, @unchecked Sendable {
    private let base: any CloudBackend
    private let gate: DispatchSemaphore
    private let entered: DispatchSemaphore

    init(_ base: any CloudBackend) {
        self.base = base
        gate = DispatchSemaphore(value: 0)
        entered = DispatchSemaphore(value: 0)
    }

    /// `base` behind the gate of `stalled`.
    private init(_ base: any CloudBackend, sharingGateOf stalled: StalledCloud) {
        self.base = base
        gate = stalled.gate
        entered = stalled.entered
    }

    /// Lets every waiting and later download through.
    func release() { for _ in 0..<64 { gate.signal() } }

    /// Waits until a download has reached the gate; false if none did within `timeout`.
    func waitUntilADownloadWaits(timeout: Duration = .seconds(10)) -> Bool {
        entered.wait(timeout: .now() + timeout.timeInterval) == .success
    }

    var location: String { base.location }
    var changeFolders: [URL] { base.changeFolders }
    func identity() throws -> CloudIdentity { try base.identity() }
    func create(_ identity: CloudIdentity, keys: [KeyEnvelope]) throws { try base.create(identity, keys: keys) }
    var sealing: CloudSealing { base.sealing }
    func sealed(by sealing: CloudSealing) -> any CloudBackend { StalledCloud(base.sealed(by: sealing), sharingGateOf: self) }
    func keyEnvelopes() throws -> [KeyEnvelope] { try base.keyEnvelopes() }
    func putPassphraseEnvelope(_ envelope: KeyEnvelope) throws { try base.putPassphraseEnvelope(envelope) }
    func register(_ device: DeviceRecord) throws { try base.register(device) }
    func devices() throws -> CloudDevices { try base.devices() }
    func append(_ batch: ChangeBatch) throws { try base.append(batch) }
    func batch(of device: DeviceID, number: Int64) throws -> ChangeBatch? { try base.batch(of: device, number: number) }
    func batches(after cursor: CloudCursor, limit: Int) throws -> (batches: [ChangeBatch], cursor: CloudCursor) {
        try base.batches(after: cursor, limit: limit)
    }
    func retire(_ device: DeviceID) throws { try base.retire(device) }
    func retiredDevices() throws -> Set<DeviceID> { try base.retiredDevices() }
    func acknowledge(_ ack: DeviceAck) throws { try base.acknowledge(ack) }
    func acknowledgements() throws -> [DeviceID: DeviceAck] { try base.acknowledgements() }
    func putSnapshot(_ snapshot: CloudSnapshot) throws { try base.putSnapshot(snapshot) }
    func latestSnapshot() throws -> CloudSnapshot? { try base.latestSnapshot() }
    func removeBatches(of device: DeviceID, through number: Int64) throws -> Int { try base.removeBatches(of: device, through: number) }
    func removeContent(except keeping: Set<ContentHash>, unusedSince: Date) throws -> Int {
        try base.removeContent(except: keeping, unusedSince: unusedSince)
    }
    func putContent(_ bytes: Data, hash: ContentHash, by device: DeviceID) throws { try base.putContent(bytes, hash: hash, by: device) }
    func hasContent(_ hash: ContentHash) throws -> Bool { try base.hasContent(hash) }
    func content(_ hash: ContentHash) throws -> Data? {
        entered.signal()
        gate.wait()
        gate.signal()
        return try base.content(hash)
    }
}

/// Reads of placeholders through a real mount while their download is stalled.
@Suite(.serialized, .scratchFolders) struct PlaceholderReadTests {
    /// FuseKit runs few worker threads: readers waiting for a download must not take them, or
    /// the rest of the mount would stop answering.
    @Test func readersWaitingForADownloadLeaveTheMountAnswering() throws {
        // Forty items, so forty readers send forty requests (readers of one file would queue
        // behind one page in the kernel).
        let library = try StalledLibrary(notes: 40)
        let (notes, local, stalled) = (library.notes, library.local, library.cloud)
        try library.b.withMount(sync: library.engine, downloadTimeout: .seconds(30)) { mount in
            defer { stalled.release() }
            let readers = try notes.map { try reader(.cat, of: mount.mountpoint + "/" + $0.path) }
            try #require(library.b.waitUntilReadersWait(notes.count), "every reader's request waits in the mount")
            #expect(stalled.waitUntilADownloadWaits(), "their downloads are held in the cloud")
            let allWaiting = readers.allSatisfy { $0.isRunning }
            #expect(allWaiting)

            // Meanwhile everything else answers (its deadline is the helpers' own, 10 s: a
            // mount whose workers all wait would not answer at all).
            #expect(try mount.text(local.path) == local.text)
            #expect(try mount.sh("ls Notes").contains("Here.md"))
            #expect(library.b.waitUntilReadersWait(notes.count), "the readers still wait")

            stalled.release()
            let ended = eventually(within: .seconds(10)) { readers.allSatisfy { !$0.isRunning } }
            #expect(ended)
            let succeeded = readers.allSatisfy { !$0.isRunning && $0.terminationStatus == 0 }
            #expect(succeeded)
            for note in notes { #expect(try mount.text(note.path) == note.text) }
        }
    }

    /// Ctrl-C frees a reader waiting for a download at once, while another reader goes on
    /// waiting and gets its bytes: `cat`, which dies of it, and a program that handles Ctrl-C
    /// itself, reading through the page cache or directly (`O_DIRECT`). The kernel interrupts
    /// the waiting read request, and the mount answers it (`EINTR`) for the program to go on.
    @Test(arguments: [Reader.cat, .handlingCtrlC, .handlingCtrlCReadingDirectly])
    func ctrlCFreesAReaderWaitingForADownload(_ kind: Reader) throws {
        let library = try StalledLibrary(notes: 2)
        let (notes, stalled) = (library.notes, library.cloud)
        try library.b.withMount(sync: library.engine, downloadTimeout: .seconds(30)) { mount in
            defer { stalled.release() }
            let givesUp = try reader(kind, of: mount.mountpoint + "/" + notes[0].path)
            let waits = try reader(.cat, of: mount.mountpoint + "/" + notes[1].path)
            // Both read requests wait in the mount, so a reader's Ctrl-C handler, set before
            // its read, is in place.
            try #require(library.b.waitUntilReadersWait(2), "both wait for the stalled download")

            givesUp.interrupt()
            // The download is still held: what ends the reader is Ctrl-C, not the bytes.
            let freed = eventually(within: .seconds(10)) { !givesUp.isRunning }
            #expect(freed, "Ctrl-C ends the wait, not the download's end")
            if kind == .cat {
                #expect(!givesUp.isRunning && givesUp.terminationReason == .uncaughtSignal)
            } else {
                #expect(!givesUp.isRunning && givesUp.terminationStatus == 3, "its handler ran")
            }
            #expect(waits.isRunning)

            stalled.release()
            let waitsEnded = eventually(within: .seconds(10)) { !waits.isRunning }
            #expect(waitsEnded)
            #expect(!waits.isRunning && waits.terminationStatus == 0)
            for note in notes { #expect(try mount.text(note.path) == note.text) }
        }
    }

    enum Reader: Sendable {
        case cat
        /// A program whose Ctrl-C handler exits with status 3.
        case handlingCtrlC
        case handlingCtrlCReadingDirectly
    }

    /// A reader of `path` started now, its output dropped, with no signal blocked as from a
    /// shell (a process the test runner starts inherits the runner's blocked signals, Ctrl-C's
    /// too).
    private func reader(_ kind: Reader, of path: String) throws -> Process {
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        let unblock = "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); "
        let handle = "signal.signal(signal.SIGINT, lambda *_: os._exit(3)); "
        let read = switch kind {
        case .cat: "os.execv('/bin/cat', ['cat', sys.argv[1]])"
        case .handlingCtrlC: handle + "os.read(os.open(sys.argv[1], os.O_RDONLY), 65536)"
        case .handlingCtrlCReadingDirectly: handle + "os.read(os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT), 65536)"
        }
        reader.arguments = ["-c", unblock + read, path]
        reader.standardOutput = FileHandle.nullDevice
        reader.standardError = FileHandle.nullDevice
        try reader.run()
        return reader
    }
}

/// Library b, linked to a cloud where library a put `notes` notes: they are placeholders in b
/// whose downloads wait for the cloud's `release()`, beside one note of b's own.
struct StalledLibrary {
    /// Holds the cloud and library a; removed with this.
    let devices: Devices
    let b: MountableLibrary
    let notes: [ItemRecord]
    let local: ItemRecord
    let cloud: StalledCloud
    /// b's sync engine, to mount it with.
    let engine: SyncEngine

    init(notes count: Int) throws {
        devices = try Devices()
        let a = try devices.library("a")
        notes = try (1...count).map { try a.insert(.note(Note(title: "Plan \($0)", content: "Read \($0).\n"))) }
        try devices.join(a, as: "a").sync()

        b = try MountableLibrary()
        local = try b.addNote("Here", content: "Already here.\n")
        try devices.link(b.store, as: "b")
        cloud = StalledCloud(try devices.cloud(for: "b"))
        engine = SyncEngine(store: b.store, cloud: cloud)
        try engine.sync()
        let store = b.store
        let allPlaceholders = try notes.allSatisfy { try store.summary(id: $0.item.id)?.isPlaceholder == true }
        #expect(allPlaceholders)
    }
}
