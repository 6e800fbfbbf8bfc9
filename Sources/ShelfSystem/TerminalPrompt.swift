import Glibc

/// A secret typed at the terminal (a cloud's passphrase): asked on the controlling terminal with
/// echo off, so it shows neither on screen nor in scrollback, and the terminal is set back
/// however the read ends — Ctrl-C, Ctrl-\ and a hang-up or `kill` included (the signal then
/// takes its course once echo is back), and Ctrl-Z gives the shell an echoing terminal until
/// `fg` resumes the prompt.
public enum TerminalPrompt {
    /// Writes `prompt` to the terminal and reads one line without echo. Nil when standard input
    /// is not a terminal (a script, a pipe, a service), where nobody could answer.
    public static func readSecret(_ prompt: String) throws(SystemCallError) -> String? {
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        let terminal = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard terminal >= 0 else { return nil }  // no controlling terminal
        defer { close(terminal) }
        var saved = termios()
        guard tcgetattr(terminal, &saved) == 0 else { throw SystemCallError("read the terminal's settings") }
        var quiet = saved
        // The typed newline still shows, so the next line starts below the prompt.
        quiet.c_lflag = (quiet.c_lflag & ~tcflag_t(ECHO | ECHOE | ECHOK)) | tcflag_t(ECHONL)
        let signals = CaughtSignals()
        defer { signals.restore() }
        // TCSAFLUSH drops what was typed ahead, which the terminal had already echoed.
        guard tcsetattr(terminal, TCSAFLUSH, &quiet) == 0 else { throw SystemCallError("turn off the terminal's echo") }
        defer { tcsetattr(terminal, TCSAFLUSH, &saved) }
        // The prompt comes once echo is off: whoever sees it may type.
        try write(Array(prompt.utf8), to: terminal)
        var line: [UInt8] = []
        while true {
            let ended = try readLine(from: terminal, into: &line)
            if CaughtSignals.pending != 0 {
                // Echo goes back on before the signal takes its course; a process still here
                // was resumed after a stop (or ignores the signal), and goes on reading.
                tcsetattr(terminal, TCSAFLUSH, &saved)
                signals.deliverCaught()
                tcsetattr(terminal, TCSAFLUSH, &quiet)
            }
            if ended { return String(decoding: line, as: UTF8.self) }
        }
    }

    private static func write(_ bytes: [UInt8], to terminal: Int32) throws(SystemCallError) {
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(terminal, $0.baseAddress, $0.count) }
            if count < 0 {
                guard errno == EINTR else { throw SystemCallError("write to the terminal") }
                continue
            }
            written += count
        }
    }

    /// Reads into `line` up to the end of the line (or of input), without the newline; true
    /// once there, false when a signal interrupted the read first.
    private static func readLine(from terminal: Int32, into line: inout [UInt8]) throws(SystemCallError) -> Bool {
        var byte: UInt8 = 0
        while CaughtSignals.pending == 0 {
            let count = read(terminal, &byte, 1)
            if count < 0 {
                guard errno == EINTR else { throw SystemCallError("read from the terminal") }
                continue
            }
            if count == 0 || byte == UInt8(ascii: "\n") { return true }
            line.append(byte)
        }
        return false
    }
}

/// The signals that would end or stop the process while the terminal's echo is off, caught
/// for as long as the value lives (as OpenSSH's `readpassphrase` does): a caught one
/// interrupts the read, and ``deliverCaught()`` lets it act with the former handling once the
/// terminal is set back.
private final class CaughtSignals {
    static let watched = [SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU]
    /// The signal caught and not delivered yet; 0 for none. Written by the handler only.
    nonisolated(unsafe) static var pending: sig_atomic_t = 0
    private var former: [Int32: sigaction] = [:]

    init() {
        for signal in Self.watched {
            var catching = sigaction()
            catching.__sigaction_handler.sa_handler = { CaughtSignals.pending = $0 }
            sigemptyset(&catching.sa_mask)
            catching.sa_flags = 0  // no SA_RESTART: the read returns EINTR
            var old = sigaction()
            sigaction(signal, &catching, &old)
            former[signal] = old
        }
    }

    /// Puts back the handling each signal had.
    func restore() {
        for (signal, old) in former {
            var old = old
            sigaction(signal, &old, nil)
        }
    }

    /// Delivers the caught signal under its former handling (the default ends or stops the
    /// process), then catches it again if the process goes on.
    func deliverCaught() {
        let signal = Self.pending
        Self.pending = 0
        guard var old = former[signal] else { return }
        var catching = sigaction()
        sigaction(signal, &old, &catching)
        raise(signal)
        sigaction(signal, &catching, nil)
    }
}
