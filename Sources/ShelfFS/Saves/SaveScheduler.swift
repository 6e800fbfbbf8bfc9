import Foundation
import ShelfSystem

/// Decides when the writes to an item file are saved into the store, and saves them on its own
/// thread.
///
/// With stateless opens no `close(2)` reaches the mount, so the moments to save are:
/// - the writer closed the file (``closed(_:)``, from the close watcher): the save follows
///   within milliseconds;
/// - a pause in writing when a close may have gone unseen (``soon(_:)``: the file's folder was
///   watched only after it was written, as when a program makes a folder and writes into it);
/// - no write for ``idleDelay`` (``wrote(_:)``): a program that keeps a file open and writes
///   now and then;
/// - synchronously, by the filesystem itself: `fsync`, renames and unlinks of the file, and
///   unmount;
/// - again after ``retryDelay`` when a save failed (a full disk, a library locked too long).
final class SaveScheduler: @unchecked Sendable {
    let idleDelay: TimeInterval
    private let condition = NSCondition()
    /// When each waiting inode is due.
    private var due: [UInt64: Date] = [:]
    private let worker = WorkerThread(name: "shelf.saves")
    /// The inode the thread is saving now, if any.
    private var inFlight: UInt64?
    /// Inodes whose last save failed: waiting for their retry, and saved at once when a command
    /// asks for every closed save.
    private var retrying: Set<UInt64> = []

    init(idleDelay: TimeInterval) {
        self.idleDelay = idleDelay
    }

    /// `inode` was written to: save it once it has been left alone for ``idleDelay``.
    func wrote(_ inode: UInt64) {
        schedule(inode, at: Date().addingTimeInterval(idleDelay))
    }

    /// `inode`, a file whose name went to another file, was written to: no close of it will be
    /// seen (the kernel reports none for a file no longer at its name), so save it once it has
    /// been left alone for a short pause.
    func wroteReplaced(_ inode: UInt64) {
        schedule(inode, at: Date().addingTimeInterval(Self.shortPause))
    }

    /// The last writer of `inode` closed it: save it now.
    func closed(_ inode: UInt64) {
        schedule(inode, at: .distantPast)
    }

    /// `inode`'s writer may have closed it unseen: save it after a short pause, unless a write
    /// shows it is still being written (its close will then be seen).
    func soon(_ inode: UInt64, after pause: TimeInterval = shortPause) {
        condition.withLock {
            due[inode] = min(due[inode] ?? .distantFuture, Date().addingTimeInterval(pause))
            condition.broadcast()
        }
    }

    /// Long enough for a program still writing to write again, short enough not to be waited for.
    static let shortPause: TimeInterval = 0.1

    /// A save of `inode` failed: try again after ``retryDelay`` (its bytes wait in memory and
    /// in the journal meanwhile).
    func failed(_ inode: UInt64) {
        condition.withLock {
            due[inode] = min(due[inode] ?? .distantFuture, Date().addingTimeInterval(Self.retryDelay))
            retrying.insert(inode)
            condition.broadcast()
        }
    }

    /// Often enough that a freed disk is noticed soon, rarely enough not to flood the log.
    static let retryDelay: TimeInterval = 2

    /// Starts the thread, which calls `save` with each inode that is due. Until then (and in
    /// tests that drive the filesystem directly) inodes only wait.
    func start(save: @escaping @Sendable (UInt64) -> Void) {
        worker.start { [self] in
            // A command that needs a save makes it on its own thread.
            LinuxCalls.yieldToRequestHandlers()
            saveUntilStopped(save)
        }
    }

    /// Ends the thread after the save under way, if any; what is still waiting is left to the
    /// caller (unmount saves everything itself).
    func stop() {
        worker.stop { condition.withLock { condition.broadcast() } }
    }

    /// Saves, on the caller's thread, every inode that is due now (its writer closed it, or an
    /// earlier save failed) and waits for the save the thread has under way: on return, every
    /// close reported so far is committed, or `save`'s first error is thrown (the rest are still
    /// tried). Files still open for writing are left to their close.
    func saveDueNow(_ save: (UInt64) throws -> Void) throws {
        let now = Date()
        let inodes = condition.withLock {
            // First the save under way: if it fails, its inode is due again and taken below.
            while inFlight != nil { condition.wait() }
            let due = self.due.filter { $0.value <= now || retrying.contains($0.key) }.map(\.key)
            for inode in due {
                self.due[inode] = nil
                retrying.remove(inode)
            }
            return due
        }
        var firstError: Error?
        for inode in inodes {
            do {
                try save(inode)
            } catch {
                failed(inode)
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
    }

    private func schedule(_ inode: UInt64, at date: Date) {
        condition.withLock {
            due[inode] = date
            condition.broadcast()
        }
    }

    private func saveUntilStopped(_ save: @Sendable (UInt64) -> Void) {
        while let inode = nextDue() {
            save(inode)
            condition.withLock {
                inFlight = nil
                condition.broadcast()
            }
        }
    }

    /// Waits for the next inode that is due; nil once stopped.
    private func nextDue() -> UInt64? {
        condition.withLock {
            while !worker.isStopping {
                let now = Date()
                if let (inode, _) = due.first(where: { $0.value <= now }) {
                    due[inode] = nil
                    retrying.remove(inode)
                    inFlight = inode
                    return inode
                }
                if let next = due.values.min() {
                    _ = condition.wait(until: next)  // woken early or timed out: either way, look again
                } else {
                    condition.wait()
                }
            }
            return nil
        }
    }
}
