import ArgumentParser
import Foundation
import ShelfStore

/// The `--library` option every command shares, and how a command finds its library:
/// the flag, then `SHELF_LIBRARY`, then the library remembered by `shelf init`.
struct LibraryOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The library folder (default: $SHELF_LIBRARY, then the one remembered by `shelf init`).", valueName: "PATH"))
    var library: String?

    /// The library folder this invocation means, or an error saying how to choose one.
    func resolvedFolder() throws -> URL {
        if let library { return URL(fileURLWithPath: library).standardizedFileURL }
        if let fromEnvironment = ProcessInfo.processInfo.environment["SHELF_LIBRARY"], !fromEnvironment.isEmpty {
            return URL(fileURLWithPath: fromEnvironment).standardizedFileURL
        }
        if let remembered = try ShelfConfig.load().library {
            return URL(fileURLWithPath: remembered).standardizedFileURL
        }
        throw CLIError("no library selected: run `shelf init PATH` to create one, or pass --library PATH (or set SHELF_LIBRARY).")
    }

    /// Opens the library; a missing or foreign folder fails with the store's message naming the fix.
    /// A mount of the library first commits the saves whose writers have closed their files,
    /// so the command sees every save that `close()` has returned from.
    func open() throws -> LibraryStore {
        let store = try LibraryStore.open(at: resolvedFolder())
        for warning in MountControl.commitPendingSaves(library: store.folder) {
            FileHandle.standardError.write(Data("shelf: warning: \(warning)\n".utf8))
        }
        return store
    }
}

/// A failure of the command line itself, printed as one line.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
