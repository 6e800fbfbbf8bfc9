import Foundation

/// The steps `FileNaming` builds a name from.
enum FileNameStem {
    static let fileExtension = ".md"
    /// The longest file name Linux file systems take, in bytes.
    static let maximumBytes = 255

    /// `text` as a name part: NFC, `/` → `-`, control characters → space, no spaces at the ends,
    /// no leading dots. May be empty.
    static func sanitized(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.precomposedStringWithCanonicalMapping.unicodeScalars {
            if scalar == "/" {
                scalars.append("-")
            } else if scalar.properties.generalCategory == .control {
                scalars.append(" ")
            } else {
                scalars.append(scalar)
            }
        }
        let name = String(scalars)
        let withoutLeading = name.drop { $0 == "." || $0.isWhitespace }
        return String(withoutLeading.reversed().drop(while: \.isWhitespace).reversed())
    }

    /// `stem` cut at a character boundary so that `stem + suffix + ".md"` fits in 255 bytes, with
    /// spaces left at the cut dropped.
    static func fitted(_ stem: String, suffix: String) -> String {
        let budget = maximumBytes - fileExtension.utf8.count - suffix.utf8.count
        guard stem.utf8.count > budget else { return stem }
        var used = 0
        let kept = stem.prefix { character in
            used += character.utf8.count
            return used <= budget
        }
        return String(kept.reversed().drop(while: \.isWhitespace).reversed())
    }
}
