import ArgumentParser
import Foundation
import ShelfSystem

/// Where an encrypted cloud's passphrase comes from: a file (`--passphrase-file`, or
/// `SHELF_CLOUD_PASSPHRASE_FILE`) for scripts, else a prompt without echo in a terminal; never
/// the command line, so it is in no process listing or shell history.
struct PassphraseOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A file whose first line is the cloud's passphrase (or SHELF_CLOUD_PASSPHRASE_FILE); without it, the passphrase is asked in the terminal.",
                               valueName: "FILE"))
    var passphraseFile: String?

    /// The passphrase of a cloud being opened, read when a link needs one: typed once.
    func read() throws -> String {
        try fromFile() ?? typed(confirmed: false)
    }

    /// A passphrase being chosen (a new encrypted cloud, a change): typed twice, so that a slip
    /// of the finger does not lock the cloud behind a passphrase nobody knows.
    func readNew() throws -> String {
        try fromFile() ?? typed(confirmed: true)
    }

    private func fromFile() throws -> String? {
        guard let path = passphraseFile ?? ProcessInfo.processInfo.environment["SHELF_CLOUD_PASSPHRASE_FILE"] else { return nil }
        guard let bytes = FileManager.default.contents(atPath: path), let text = String(data: bytes, encoding: .utf8) else {
            throw CLIError("cannot read the passphrase file \(path); check that it exists and that you may read it.")
        }
        // Any line ending ends the line: "\r\n" is one Character, never equal to "\n".
        let passphrase = String(text.split(maxSplits: 1, omittingEmptySubsequences: false, whereSeparator: \.isNewline).first ?? "")
        guard !passphrase.isEmpty else { throw CLIError("the passphrase file \(path) holds no passphrase on its first line.") }
        return passphrase
    }

    private func typed(confirmed: Bool) throws -> String {
        let passphrase = try ask("Passphrase for the cloud: ")
        guard !passphrase.isEmpty else { throw CLIError("no passphrase was typed; nothing was changed. Run the command again and type it.") }
        if confirmed, try ask("The same passphrase again: ") != passphrase {
            throw CLIError("the two passphrases typed differ; nothing was changed. Run the command again and type the same one twice.")
        }
        return passphrase
    }

    private func ask(_ prompt: String) throws -> String {
        let answer: String?
        do {
            answer = try TerminalPrompt.readSecret(prompt)
        } catch {
            throw CLIError("cannot ask for the passphrase in the terminal (\(error)); name a file holding it with --passphrase-file FILE.")
        }
        guard let answer else {
            throw CLIError("a passphrase is needed, and there is no terminal here to type it in: name a file holding it with --passphrase-file FILE or SHELF_CLOUD_PASSPHRASE_FILE.")
        }
        return answer
    }
}
