import Foundation
import Synchronization
import Testing
import FuseKit
import TestSupport
import TestTraits
import ShelfModel
import ShelfStore
@testable import ShelfFS
import ShelfSystem

/// The entry point the CLI uses: clear errors, and a run that ends cleanly on unmount.
@Suite(.serialized, .scratchFolders) struct ShelfMountTests {
    @Test func missingMountpointIsOneClearError() throws {
        let library = try MountableLibrary()
        let missing = library.folder.appendingPathComponent("no-such-folder").path
        #expect(throws: FuseSessionError.mountpointMissing(missing)) {
            _ = try ShelfMount(store: library.store, mountpoint: missing)
        }
    }

    @Test func runEndsNormallyOnUnmountAndTheMountServesMeanwhile() throws {
        let library = try MountableLibrary()
        let note = try library.addNote()
        let mountpoint = library.folder.appendingPathComponent("mnt").path
        try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
        let mount = try ShelfMount(store: library.store, mountpoint: mountpoint)
        let ready = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let thread = Thread {
            outcome.withLock { $0 = Result { try mount.run { ready.signal() } } }
            ended.signal()
        }
        thread.start()
        // Once ready, nothing of the mount's own holds it, so the unmount below must not be busy.
        #expect(ready.wait(timeout: .now() + 10) == .success, "run() must say when the mount is set up")
        let read = try CommandRunner.run("cat", ["Notes/Plan.md"], in: mountpoint, timeout: .seconds(10))
        let unmount = try CommandRunner.run("fusermount3", ["-u", mountpoint], in: "/", timeout: .seconds(10))
        let returned = ended.wait(timeout: .now() + 10) == .success
        if !returned { _ = try? CommandRunner.run("fusermount3", ["-u", "-z", mountpoint], in: "/", timeout: .seconds(10)) }
        #expect(read.stdout == note.text)
        #expect(unmount.succeeded, "\(unmount)")
        #expect(returned, "run() must return after fusermount3 -u")
        #expect(throws: Never.self) { try outcome.withLock { $0 }?.get() }
        #expect(MountTable.mount(at: mountpoint) == nil)
    }
}
