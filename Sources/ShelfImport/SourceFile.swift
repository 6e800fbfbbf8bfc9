import Foundation

/// An import's file, read from disk at most once and decoded at most once, by whoever asks
/// first: the format detector looks at the text a reader then reads.
final class SourceFile {
    let url: URL
    private var bytes: Result<Data, any Error>?
    private var decoded: Result<SourceText, any Error>?

    init(_ url: URL) {
        self.url = url
    }

    var path: String { url.path }

    /// Its bytes, whatever they are.
    func data() throws -> Data {
        if bytes == nil { bytes = Result { try SourceText.load(url) } }
        return try bytes!.get()
    }

    /// Its bytes, refused when they are clearly not text.
    func textData() throws -> Data {
        let data = try data()
        if let kind = SourceText.binaryKind(of: data) { throw ImportError.notCSV(path: path, looksLike: kind) }
        return data
    }

    /// Its text, decoded (``SourceText/init(decoding:path:)``).
    func text() throws -> SourceText {
        if decoded == nil { decoded = Result { try SourceText(decoding: try textData(), path: path) } }
        return try decoded!.get()
    }
}
