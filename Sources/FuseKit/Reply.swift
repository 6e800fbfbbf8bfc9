import Foundation
import Logging

/// The one answer to one kernel request.
///
/// A handler receives a reply and must answer it exactly once — with ``succeed(_:)``,
/// ``fail(_:)`` or ``respond(_:)`` — either before returning or later from any thread.
/// A reply dropped unanswered answers `EIO` (and logs), so a forgotten path in a handler never
/// leaves a process stuck in the kernel. A second answer is ignored and logged (quietly after
/// ``failOnInterrupt()``, where the handler's answer may come after the interrupt's).
public final class Reply<Success>: @unchecked Sendable {
    /// Guards `deliver`, which is taken (set to nil) by the first answer, and `interruptKey`.
    private let lock = NSLock()
    private var deliver: ((Result<Success, Errno>) -> Void)?
    private let operation: StaticString
    /// The kernel request this answers; nil for a reply a test made.
    private let request: OpaquePointer?
    /// Set by ``failOnInterrupt()``: the answer that comes after an interrupt is dropped quietly.
    private var interruptKey: Int?

    /// Makes a reply that hands its one result to `deliver`. FuseKit's request dispatch passes
    /// a closure that answers libfuse, and the request for ``failOnInterrupt()``; tests pass
    /// one that records the result.
    package init(operation: StaticString, request: OpaquePointer? = nil,
                 deliver: @escaping (Result<Success, Errno>) -> Void) {
        self.operation = operation
        self.request = request
        self.deliver = deliver
    }

    deinit {
        if let deliver {
            fuseKitLogger.error("\(operation) reply dropped unanswered; answering EIO")
            deliver(.failure(.ioError))
        }
    }

    public func succeed(_ value: Success) {
        answer(.success(value))
    }

    /// Answers with the errno of `error` (see ``Errno/init(for:)``).
    public func fail(_ error: any Error) {
        answer(.failure(Errno(for: error)))
    }

    /// Answers with what `body` returns, or the errno of what it throws.
    public func respond(_ body: () throws -> Success) {
        do {
            succeed(try body())
        } catch {
            fail(error)
        }
    }

    /// For a handler that answers later: answers `EINTR` as soon as the kernel says the calling
    /// process gave up waiting (a signal, such as Ctrl-C), which frees it; the handler's own
    /// answer then comes too late and is dropped quietly.
    public func failOnInterrupt() {
        guard let request else { return }
        let key = InterruptWatch.watch(request) { [weak self] in self?.answer(.failure(.interrupted)) }
        let isAnswered = lock.withLock {
            interruptKey = key
            return deliver == nil
        }
        if isAnswered { InterruptWatch.forget(key) }
    }

    private func answer(_ result: Result<Success, Errno>) {
        lock.lock()
        let deliver = self.deliver
        self.deliver = nil
        let interruptKey = self.interruptKey
        lock.unlock()
        if let interruptKey { InterruptWatch.forget(interruptKey) }
        guard let deliver else {
            if interruptKey == nil { fuseKitLogger.error("\(operation) reply answered twice; ignoring the second answer") }
            return
        }
        deliver(result)
    }
}

extension Reply where Success == Void {
    /// Answers "done" (errno 0).
    public func succeed() { succeed(()) }
}

extension Reply where Success == [UInt8] {
    public func succeed(_ data: Data) { succeed([UInt8](data)) }
}

/// An entry for a name (lookup, mkdir, mknod, symlink, link).
public typealias EntryReply = Reply<Entry>
/// Attributes of a file (getattr, setattr).
public typealias AttributesReply = Reply<CachedAttributes>
/// An opened file or directory (open, opendir).
public typealias OpenReply = Reply<OpenedFile>
/// A created and opened file (create).
public typealias CreateReply = Reply<CreatedFile>
/// Bytes read; fewer than asked only at the end of the file (read).
public typealias DataReply = Reply<[UInt8]>
/// The number of bytes written (write).
public typealias WriteReply = Reply<Int>
/// Just success or an errno (unlink, rmdir, rename, flush, release, fsync, setxattr, …).
public typealias EmptyReply = Reply<Void>
/// A symbolic link's target (readlink).
public typealias ReadlinkReply = Reply<String>
/// Filesystem statistics (statfs).
public typealias StatisticsReply = Reply<FilesystemStatistics>
/// An extended attribute's value (getxattr). FuseKit answers the caller's size probe and
/// `ERANGE` itself, so the filesystem just gives the whole value.
public typealias ExtendedAttributeReply = Reply<[UInt8]>
/// The names of all extended attributes (listxattr); size probes are handled by FuseKit.
public typealias ExtendedAttributeListReply = Reply<[String]>
/// One batch of a directory listing (readdir).
public typealias DirectoryReply = Reply<DirectoryListing>
/// One batch of a directory listing with entries (readdirplus).
public typealias DirectoryPlusReply = Reply<DirectoryPlusListing>

/// The logger for FuseKit's own diagnostics (dropped replies, notifier failures).
let fuseKitLogger = Logger(label: "FuseKit")
