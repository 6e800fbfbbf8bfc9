import Foundation
import Glibc

/// What another process's main thread is doing, from `/proc/PID/wchan` (the kernel function it
/// sleeps in): a test waits until a program it started has reached the wait it means to test
/// — a polling loop's sleep, a read — instead of sleeping and hoping it got there.
public enum ProcessProbe {
    /// Waits until process `pid`'s main thread sleeps in a kernel function whose name contains
    /// `function` (`nanosleep`: a loop between its looks); false if not within `timeout`.
    public static func waitUntilSleeping(_ pid: pid_t, in function: String,
                                         within timeout: Duration = .seconds(10)) -> Bool {
        eventually(within: timeout) {
            ((try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? "").contains(function)
        }
    }
}
