import Foundation

/// A fresh folder under the system's temporary folder, removed with everything in it when the
/// value goes away — kept, and named on stdout, when `SHELF_KEEP_SCRATCH` is set (a soak or a
/// loop chasing a rare failure looks at what the failing run left).
public final class TemporaryFolder: Sendable {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("shelf-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        if ProcessInfo.processInfo.environment["SHELF_KEEP_SCRATCH"] != nil {
            print("scratch folder kept (SHELF_KEEP_SCRATCH): \(url.path)")
        } else {
            try? FileManager.default.removeItem(at: url)
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
