import Foundation

/// The backend a cloud location names: a folder path (the embedded default) or a URL.
public enum CloudLocation {
    public static func backend(_ location: String) throws -> any CloudBackend {
        if location.hasPrefix("postgres://") || location.hasPrefix("postgresql://") {
            throw CloudLocationError(description: "PostgreSQL clouds are not supported by this Shelf yet; link a folder (`shelf cloud link DIR`).")
        }
        return FolderCloud(folder: URL(fileURLWithPath: location))
    }
}

public struct CloudLocationError: Error, CustomStringConvertible {
    public let description: String
}
