import Foundation

/// Recognises the highlight sources when `--format` is left out, by what they are on disk:
/// a Calibre library (or its `metadata.db`), a Kobo's database (or the device folder holding
/// it), a folder of KOReader sidecars, one sidecar, KOReader's JSON export, a CSV with
/// Readwise's header.
enum HighlightSourceDetector {
    static func format(of file: SourceFile) -> ImportFormat? {
        let url = file.url
        if MarkdownFolderImport.isFolder(url) {
            if CalibreReader.database(in: url) != nil { return .calibre }
            if KoboReader.database(in: url) != nil { return .kobo }
            return KOReaderReader.sidecars(in: url).isEmpty ? nil : .koreader
        }
        if url.lastPathComponent == KoboReader.databaseName { return .kobo }
        if url.lastPathComponent == CalibreReader.databaseName { return .calibre }
        if url.pathExtension == "lua" { return .koreader }
        guard let source = try? file.text() else { return nil }
        if KOReaderReader.isJSONExport(source.text) { return .koreader }
        return ReadwiseReader.hasReadwiseHeader(source.text) ? .readwise : nil
    }
}
