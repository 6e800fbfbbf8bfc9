import Foundation

/// A fresh folder under the system's temporary folder. Made in a test under the `ScratchFolders`
/// trait, it goes when the test passes and stays, named, when it fails (``ScratchScope``);
/// elsewhere it goes with the value — unless `SHELF_KEEP_SCRATCH` is set, which keeps it and
/// names it on stdout (a soak or a loop chasing a rare failure looks at what the failing run left).
public final class TemporaryFolder: Sendable {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("shelf-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        if ScratchScope.adopt(url) { return }
        if ScratchScope.keepsEverything {
            print("scratch folder kept (SHELF_KEEP_SCRATCH): \(url.path)")
        } else {
            ScratchScope.remove(url)
        }
    }

    /// A path inside the folder that does not exist yet.
    public func child(_ name: String) -> URL { url.appendingPathComponent(name, isDirectory: true) }

    /// Writes `text` to `name` in the folder and returns its URL.
    public func file(_ name: String, _ text: String) throws -> URL {
        let file = url.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file
    }
}
