import Glibc

/// A secret typed at the terminal (a cloud's passphrase): asked on the controlling terminal with
/// echo off, so it shows neither on screen nor in scrollback, and the terminal is set back
/// however the read ends.
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
        // TCSAFLUSH drops what was typed ahead, which the terminal had already echoed.
        guard tcsetattr(terminal, TCSAFLUSH, &quiet) == 0 else { throw SystemCallError("turn off the terminal's echo") }
        defer { tcsetattr(terminal, TCSAFLUSH, &saved) }
        // The prompt comes once echo is off: whoever sees it may type.
        try write(Array(prompt.utf8), to: terminal)
        return String(decoding: try readLine(from: terminal), as: UTF8.self)
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

    /// The bytes up to the end of the line (or of input), without the newline.
    private static func readLine(from terminal: Int32) throws(SystemCallError) -> [UInt8] {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(terminal, &byte, 1)
            if count < 0 {
                guard errno == EINTR else { throw SystemCallError("read from the terminal") }
                continue
            }
            if count == 0 || byte == UInt8(ascii: "\n") { return line }
            line.append(byte)
        }
    }
}
