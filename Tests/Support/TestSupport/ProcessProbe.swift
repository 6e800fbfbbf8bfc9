import Foundation
import Glibc

/// What other processes are doing, from `/proc`: a test waits until a program it started has
/// reached the wait it means to test — a polling loop's sleep, a read (`/proc/PID/wchan`, the
/// kernel function it sleeps in) — or until the programs working in a folder are gone, instead
/// of sleeping and hoping.
public enum ProcessProbe {
    /// Waits until process `pid`'s main thread sleeps in a kernel function whose name contains
    /// `function` (`nanosleep`: a loop between its looks); false if not within `timeout`.
    public static func waitUntilSleeping(_ pid: pid_t, in function: String,
                                         within timeout: Duration = .seconds(10)) -> Bool {
        eventually(within: timeout) {
            ((try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8)) ?? "").contains(function)
        }
    }

    /// The processes whose command line names `text` (a mount daemon names its library folder).
    public static func processes(namingInCommandLine text: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = pid_t(entry), pid != getpid(),
                  let arguments = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let commandLine = String(decoding: arguments.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            return commandLine.contains(text) ? pid : nil
        }
    }

    /// Waits until no process names `text` on its command line; false if one is left at `timeout`.
    public static func waitUntilGone(namingInCommandLine text: String, within timeout: Duration) -> Bool {
        eventually(within: timeout) { processes(namingInCommandLine: text).isEmpty }
    }
}
