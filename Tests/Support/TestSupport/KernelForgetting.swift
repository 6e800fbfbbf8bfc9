import Foundation
import ShelfSystem

/// Has the kernel drop its cached names and inodes (`vm.drop_caches = 2`) every few
/// milliseconds while it runs, as memory pressure does: a FUSE mount is then told to forget
/// its files at any moment — between a writer's close and its save, while a file's first save
/// lands. Needs root; it affects the whole machine's caches, never what any file holds.
public final class KernelForgetting: Sendable {
    private static let control = "/proc/sys/vm/drop_caches"
    private let worker = WorkerThread(name: "KernelForgetting")

    /// Starts dropping; throws when the kernel's control cannot be written (not root).
    public init(every pause: Duration = .milliseconds(20)) throws {
        let control = FileHandle(forWritingAtPath: Self.control)
        guard let control else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: Self.control]) }
        try control.close()
        let worker = self.worker
        worker.start {
            while !worker.isStopping {
                try? "2".write(toFile: Self.control, atomically: false, encoding: .utf8)
                Thread.sleep(forTimeInterval: pause.timeInterval)
            }
        }
    }

    /// Stops dropping and waits for the thread.
    public func stop() {
        worker.stop()
    }
}
