import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// A PostgreSQL cloud's address, `postgres://USER@HOST[:PORT]/DB[?sslmode=…&cloud=…]`, read by
/// libpq's rules (postgres-nio reads neither URLs nor `~/.pgpass`).
///
/// The address is what Shelf stores in the library's link, so it never holds a password: one
/// written into it is refused, and the password comes from `PGPASSWORD`, then `PGPASSFILE` or
/// `~/.pgpass`, each time the cloud is opened.
public struct PostgresAddress: Equatable, Sendable {
    public var user: String
    public var host: String
    public var port: Int
    public var database: String
    /// The schema holding the cloud: `?cloud=NAME`, else the role's own (named like it).
    public var cloud: String
    public var tls: TLSMode
    /// `?sslrootcert=FILE`: the CA that `verify-ca`/`verify-full` trust instead of the system's.
    public var rootCertificate: String?
    /// Where `LISTEN` connects when a pooler sits between Shelf and the server (`?listen_host=`,
    /// `?listen_port=`): notifications need a session of their own on the server itself.
    public var listenHost: String?
    public var listenPort: Int?

    /// libpq's `sslmode`, as far as a client without client certificates needs it.
    public enum TLSMode: String, Sendable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    static let schemes = ["postgres://", "postgresql://"]
    private static let parameters = ["sslmode", "sslrootcert", "cloud", "listen_host", "listen_port", "application_name", "connect_timeout"]

    /// Whether `location` is meant as a PostgreSQL address (it may still be a bad one).
    public static func isAddress(_ location: String) -> Bool {
        schemes.contains { location.lowercased().hasPrefix($0) }
    }

    public init(_ location: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        func refuse(_ reason: String) -> CloudLocationError {
            CloudLocationError(description: "\(location.redactingPassword) is not a PostgreSQL cloud address: \(reason)")
        }
        guard Self.isAddress(location), let components = URLComponents(string: location), let host = components.host, !host.isEmpty else {
            throw refuse("write it as postgres://USER@HOST[:PORT]/DATABASE")
        }
        if components.password != nil {
            throw CloudLocationError(description: """
                the cloud address holds a password, and Shelf keeps addresses in the library's settings: \
                remove it from the address and put it in PGPASSWORD or ~/.pgpass (HOST:PORT:DATABASE:USER:PASSWORD, mode 0600).
                """)
        }
        let defaultUser = environment["PGUSER"] ?? environment["USER"] ?? NSUserName()
        user = components.user.flatMap(\.removingPercentEncoding).flatMap { $0.isEmpty ? nil : $0 } ?? defaultUser
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        port = components.port ?? 5432
        let path = components.path.removingPercentEncoding ?? components.path
        database = path.hasPrefix("/") && path.count > 1 ? String(path.dropFirst()) : user
        cloud = user
        tls = .prefer
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                guard let mode = TLSMode(rawValue: value) else {
                    throw refuse("sslmode=\(value) is not one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                tls = mode
            case "sslrootcert": rootCertificate = value == "system" ? nil : value
            case "cloud": cloud = value
            case "listen_host": listenHost = value
            case "listen_port":
                guard let number = Int(value), (1...65535).contains(number) else { throw refuse("listen_port=\(value) is not a port number") }
                listenPort = number
            case "application_name", "connect_timeout": break
            default:
                throw refuse("it has the setting `\(item.name)`, which Shelf does not know; it knows \(Self.parameters.joined(separator: ", "))")
            }
        }
        guard !cloud.isEmpty, cloud.utf8.count <= 63 else { throw refuse("the cloud's name must be 1 to 63 bytes long") }
    }

    /// The address as Shelf stores and shows it: no password, settings in a fixed order.
    public var location: String {
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = user
        components.host = host.contains(":") ? "[\(host)]" : host
        components.port = port == 5432 ? nil : port
        components.path = "/" + database
        var items: [URLQueryItem] = []
        if tls != .prefer { items.append(URLQueryItem(name: "sslmode", value: tls.rawValue)) }
        if let rootCertificate { items.append(URLQueryItem(name: "sslrootcert", value: rootCertificate)) }
        if cloud != user { items.append(URLQueryItem(name: "cloud", value: cloud)) }
        if let listenHost { items.append(URLQueryItem(name: "listen_host", value: listenHost)) }
        if let listenPort { items.append(URLQueryItem(name: "listen_port", value: String(listenPort))) }
        components.queryItems = items.isEmpty ? nil : items
        return components.string ?? "postgres://\(user)@\(host)/\(database)"
    }

    /// Opens the cloud: finds the password and sets up TLS, connecting only when first used.
    public func cloud(environment: [String: String] = ProcessInfo.processInfo.environment,
                      logger: Logger = Logger(label: "shelf.cloud.postgres")) throws -> PostgresCloud {
        let password = try PostgresPasswords.password(for: self, environment: environment)
        let tlsSetting = try connectionTLS()
        let data = PostgresConnection.Configuration(host: host, port: port, username: user, password: password,
                                                    database: database, tls: tlsSetting)
        let listen = PostgresConnection.Configuration(host: listenHost ?? host, port: listenPort ?? port, username: user,
                                                      password: password, database: database, tls: tlsSetting)
        return PostgresCloud(session: PostgresSession(configuration: data, location: location, logger: logger),
                             schemaName: cloud, listenConfiguration: listen, logger: logger)
    }

    /// `require` encrypts without checking who answers (libpq's meaning); `verify-ca` checks
    /// the certificate's chain, `verify-full` also that it names the host.
    private func connectionTLS() throws -> PostgresConnection.Configuration.TLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch tls {
        case .disable: return .disable
        case .allow, .prefer, .require: configuration.certificateVerification = .none
        case .verifyCA: configuration.certificateVerification = .noHostnameVerification
        case .verifyFull: configuration.certificateVerification = .fullVerification
        }
        if let rootCertificate {
            let path = (rootCertificate as NSString).expandingTildeInPath
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw CloudLocationError(description: "sslrootcert=\(rootCertificate) cannot be read; name the CA certificate (PEM) that signed the server's")
            }
            configuration.trustRoots = .file(path)
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw CloudLocationError(description: "cannot set up TLS for the cloud: \(error)")
        }
        return tls == .require || tls == .verifyCA || tls == .verifyFull ? .require(context) : .prefer(context)
    }
}

/// Passwords by libpq's rules: `PGPASSWORD`, else the first matching line of `PGPASSFILE` or
/// `~/.pgpass` (`host:port:database:user:password`, `*` matching anything, `\:` and `\\`
/// escaped), which must not be readable by others.
enum PostgresPasswords {
    static func password(for address: PostgresAddress, environment: [String: String]) throws -> String? {
        if let password = environment["PGPASSWORD"], !password.isEmpty { return password }
        let file = environment["PGPASSFILE"] ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.pgpass"
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file) else { return nil }
        let mode = (attributes[.posixPermissions] as? Int) ?? 0
        guard mode & 0o077 == 0 else {
            throw CloudLocationError(description: "\(file) may be read by other users (mode \(String(mode, radix: 8))); make it private: chmod 600 \(file)")
        }
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw CloudLocationError(description: "\(file) cannot be read as text; it holds HOST:PORT:DATABASE:USER:PASSWORD lines")
        }
        let wanted = [address.host, String(address.port), address.database, address.user]
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let fields = fields(of: Substring(line))
            guard fields.count == 5 else { continue }
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    /// A line's fields, split at `:` that is not escaped, with escapes undone.
    static func fields(of line: Substring) -> [String] {
        var fields: [String] = [], field = "", escaped = false
        for character in line {
            if escaped {
                field.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" && fields.count < 4 {
                fields.append(field)
                field = ""
            } else {
                field.append(character)
            }
        }
        return fields + [field]
    }
}

extension String {
    /// The address with any password replaced, for an error message about it.
    var redactingPassword: String {
        guard var components = URLComponents(string: self), components.password != nil else { return self }
        components.password = "…"
        return components.string ?? "the address"
    }
}
