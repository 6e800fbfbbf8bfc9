import CSV

/// One record of a CSV file with the physical line it starts on.
struct CSVRecord: Hashable, Sendable {
    /// 1-based line of the file where the record starts, counting the line breaks inside
    /// quoted cells of earlier records, so a problem report points at the right place.
    var line: Int
    var cells: [String]
}

/// A CSV file read by CSV.swift: the header row and the records after it.
struct CSVTable: Sendable {
    var header: [String]
    var records: [CSVRecord]

    /// Parses `text` (already without a byte order mark). Blank lines are dropped.
    /// Returns nil when there is no header row.
    ///
    /// Spreadsheets in many locales save "CSV" with semicolons, and some tools write tabs; the
    /// delimiter is the one that splits the header row into the most columns.
    init?(text: String) {
        let headerLine = String(text.prefix { $0 != "\n" && $0 != "\r\n" && $0 != "\r" })
        let delimiter = [",", ";", "\t"].max { a, b in
            headerLine.unicodeScalars.count(where: { $0 == a }) < headerLine.unicodeScalars.count(where: { $0 == b })
        }!
        guard let reader = try? CSVReader(string: text, hasHeaderRow: false, delimiter: delimiter),
              let header = reader.next() else { return nil }
        var line = 1 + CSVTable.lineBreaks(in: header) + 1
        var records: [CSVRecord] = []
        while let cells = reader.next() {
            if cells.contains(where: { !$0.isEmpty }) {
                records.append(CSVRecord(line: line, cells: cells))
            }
            line += CSVTable.lineBreaks(in: cells) + 1
        }
        self.header = header
        self.records = records
    }

    /// Line breaks inside the cells of one record. CSV.swift keeps a quoted cell's line breaks
    /// verbatim, so counting them (CRLF as one) tells how many physical lines the record spans.
    private static func lineBreaks(in cells: [String]) -> Int {
        cells.reduce(0) { count, cell in
            var breaks = 0
            var afterCR = false
            for scalar in cell.unicodeScalars {
                if scalar == "\r" { breaks += 1 } else if scalar == "\n", !afterCR { breaks += 1 }
                afterCR = scalar == "\r"
            }
            return count + breaks
        }
    }
}
