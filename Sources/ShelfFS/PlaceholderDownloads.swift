import Foundation
import ShelfModel
import Synchronization

/// The mount's downloads of placeholders: one download per item however many readers wait,
/// and no FUSE worker thread held while it runs — a reader's request is kept and answered
/// when the download ends, or with `EIO` once `timeout` has passed (the download goes on, and
/// the next read finds the bytes or joins it). FuseKit has few workers: fifty readers of one
/// placeholder must not stop the rest of the mount.
final class PlaceholderDownloads: Sendable {
    /// Brings one item's bytes into the store, throwing why it could not.
    typealias Download = @Sendable (ItemID) throws -> Void

    private let download: Download?
    private let timeout: Duration
    /// Per item being downloaded, the waiters to tell when it ends, by number.
    private let waiting = Mutex<(next: Int, byItem: [ItemID: [Int: @Sendable (Error?) -> Void]])>((0, [:]))

    /// `download` nil: the library is not linked to a cloud, so placeholders cannot be filled.
    init(download: Download?, timeout: Duration) {
        self.download = download
        self.timeout = timeout
    }

    /// Whether placeholders can exist here at all (the library is linked to a cloud): an
    /// unlinked mount skips every placeholder check on its reads.
    var isLinked: Bool { download != nil }

    /// Whether item `id` is being downloaded now.
    func isDownloading(_ id: ItemID) -> Bool {
        waiting.withLock { $0.byItem[id] != nil }
    }

    /// Calls `done` once, from another thread: with nil when item `id`'s bytes are in the
    /// store, with the error when the download failed or `timeout` passed first.
    func whenDownloaded(_ id: ItemID, _ done: @escaping @Sendable (Error?) -> Void) {
        guard let download else { return done(NotLinked()) }
        let (number, starts) = waiting.withLock { state -> (Int, Bool) in
            state.next += 1
            let starts = state.byItem[id] == nil
            state.byItem[id, default: [:]][state.next] = done
            return (state.next, starts)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.seconds(timeout)) { [self] in
            take(number, of: id)?(TimedOut(timeout: timeout))
        }
        guard starts else { return }
        DispatchQueue.global().async { [self] in
            var failure: Error?
            do { try download(id) } catch { failure = error }
            let waiters = waiting.withLock { $0.byItem.removeValue(forKey: id) ?? [:] }
            for waiter in waiters.values { waiter(failure) }
        }
    }

    /// Blocks until item `id` is downloaded (for a write into a placeholder, which needs the
    /// bytes it writes into); throws why not.
    func waitUntilDownloaded(_ id: ItemID) throws {
        let result = Mutex<Error??>(nil)
        let ended = DispatchSemaphore(value: 0)
        whenDownloaded(id) { error in
            result.withLock { $0 = .some(error) }
            ended.signal()
        }
        ended.wait()
        if let error = result.withLock({ $0 }) ?? nil { throw error }
    }

    private func take(_ number: Int, of id: ItemID) -> (@Sendable (Error?) -> Void)? {
        waiting.withLock { $0.byItem[id]?.removeValue(forKey: number) }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// A read found item `id` a placeholder that the index did not know of yet.
    struct NotHere: Error {
        let id: ItemID
    }

    struct NotLinked: Error, CustomStringConvertible {
        var description: String { "the item's bytes are in the cloud, but this library is not linked to it any more" }
    }

    struct TimedOut: Error, CustomStringConvertible {
        let timeout: Duration
        var description: String { "the download did not finish within \(timeout); it goes on, and a later read gets the bytes" }
    }
}
