internal import CFuse
import Foundation
import Synchronization

/// The interrupt handlers of requests answered later (``Reply/failOnInterrupt()``), by a key
/// libfuse hands back to its callback. The reply may be sent, and libfuse's request freed,
/// while an interrupt for it is being handled: the callback finds its handler here or not at
/// all, never through a pointer into freed memory.
enum InterruptWatch {
    private static let handlers = Mutex<(next: Int, byKey: [Int: @Sendable () -> Void])>((0, [:]))

    /// Calls `handler` once, on another thread, if the kernel interrupts `request`; returns the
    /// key to ``forget(_:)`` it by once the request is answered.
    static func watch(_ request: OpaquePointer, _ handler: @escaping @Sendable () -> Void) -> Int {
        let key = handlers.withLock { state in
            state.next += 1
            state.byKey[state.next] = handler
            return state.next
        }
        // libfuse calls this under the request's lock, at once if the interrupt came already: an
        // answer from inside it could free the request under libfuse's feet.
        fuse_req_interrupt_func(request, { _, data in
            let key = Int(bitPattern: data)
            guard let handler = InterruptWatch.handlers.withLock({ $0.byKey.removeValue(forKey: key) }) else { return }
            DispatchQueue.global().async { handler() }
        }, UnsafeMutableRawPointer(bitPattern: key))
        return key
    }

    static func forget(_ key: Int) {
        _ = handlers.withLock { $0.byKey.removeValue(forKey: key) }
    }
}
