import Foundation
import ShelfModel

/// Bytes written to an item file that are too large for an item, kept unchanged as the plain
/// file `<name>.md.too-large` beside it: the one place that names them and finds them again
/// (`shelf status`).
public enum TooLargeFiles {
    /// The largest item file saved as a record (8 MiB: far beyond any note or book). Larger
    /// bytes are never read into memory: they move out of the journal, unchanged, into the
    /// plain file beside the item, and the item keeps its last good save.
    public static let largestItemFile = 8 << 20
    package static let suffix = ".too-large"

    /// Every such file in the item folders of the library whose plain-file area is `plainFiles`,
    /// by mount path, with its size.
    public static func list(plainFiles: URL) -> [(path: String, size: Int)] {
        var found: [(path: String, size: Int)] = []
        for kind in ItemKind.allCases {
            let top = plainFiles.appendingPathComponent(kind.folderName)
            guard let walk = FileManager.default.enumerator(at: top, includingPropertiesForKeys: [.fileSizeKey]) else { continue }
            for case let file as URL in walk where isTooLargeName(file.lastPathComponent) {
                let size = (try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
                found.append((kind.folderName + String(file.path.dropFirst(top.path.count)), size))
            }
        }
        return found.sorted { $0.path < $1.path }
    }

    private static func isTooLargeName(_ name: String) -> Bool {
        guard let range = name.range(of: ".md" + suffix, options: .backwards) else { return false }
        let rest = name[range.upperBound...]
        return rest.isEmpty || (rest.first == "-" && Int(rest.dropFirst()) != nil)
    }
}
