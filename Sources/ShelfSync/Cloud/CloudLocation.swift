import Foundation

/// The backend a cloud location names: a folder path (the embedded default) or a
/// `postgres://` address.
public enum CloudLocation {
    public static func backend(_ location: String) throws -> any CloudBackend {
        if PostgresAddress.isAddress(location) { return try PostgresAddress(location).cloud() }
        return FolderCloud(folder: URL(fileURLWithPath: location))
    }
}

public struct CloudLocationError: Error, CustomStringConvertible {
    public let description: String
}
