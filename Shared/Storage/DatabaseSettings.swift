import Foundation
public import NIOSSL
public import PostgresNIO

/// Where the database is and how to reach it: `DATABASE_URL`,
/// `postgres://user[:password]@host[:port]/database[?sslmode=…&sslrootcert=…&sslcert=…&sslkey=…]` (libpq's
/// parameter names), with `DATABASE_POOL_SIZE` and `DATABASE_TRANSACTION_TIMEOUT_MS` beside it. A password is
/// never part of an error or a log line.
public struct DatabaseSettings: Sendable, Hashable {
    /// How the connection is encrypted and what is checked of the server (libpq's `sslmode`).
    public enum SSLMode: String, Sendable, Hashable, CaseIterable {
        /// Plain TCP (loopback, a private network that is encrypted anyway).
        case disable
        /// TLS if the server offers it, nothing checked.
        case prefer
        /// TLS or no connection; the certificate is not checked (unless `sslrootcert` is given: then as verify-ca).
        case require
        /// TLS, the server's certificate chains to the CA (`sslrootcert`, else the system's roots).
        case verifyCA = "verify-ca"
        /// As verify-ca, and the certificate names the host connected to.
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// The TLS mode; `disable` unless the URL says otherwise.
    public var sslMode: SSLMode = .disable
    /// A PEM file of the CA certificates the server's certificate must chain to.
    public var sslRootCert: String?
    /// A PEM client certificate (chain) and its key, for servers that ask for one.
    public var sslCert: String?
    public var sslKey: String?
    /// The most connections the service's pool opens (`DATABASE_POOL_SIZE`, PostgresNIO's default 20).
    public var poolSize = 20
    /// How long one unit of database work (a transaction) may take before the caller gives up on it and retries
    /// on a fresh connection (`DATABASE_TRANSACTION_TIMEOUT_MS`): a query on a connection cut by a server crash
    /// can otherwise wait for ever.
    public var transactionTimeout: Duration = .seconds(30)

    /// Parses a `postgres://` URL with its TLS parameters; the files it names must be readable PEM.
    public init(url text: String) throws(StorageError) {
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? ""),
            let host = url.host, !host.isEmpty, let username = url.user
        else {
            throw StorageError(
                "DATABASE_URL must look like postgres://user[:password]@host[:port]/database, not \(Self.redacted(text))"
            )
        }
        self.host = host
        self.port = url.port ?? 5432
        self.username = username
        self.password = url.password
        let path = url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        self.database = path.isEmpty ? username : path
        for item in url.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                guard let mode = SSLMode(rawValue: value) else {
                    throw StorageError(
                        "DATABASE_URL's sslmode must be one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", ")), not \(value)"
                    )
                }
                self.sslMode = mode
            case "sslrootcert": self.sslRootCert = value
            case "sslcert": self.sslCert = value
            case "sslkey": self.sslKey = value
            default: throw StorageError("DATABASE_URL has a parameter this service does not know: \(item.name)")
            }
        }
        guard (self.sslCert == nil) == (self.sslKey == nil) else {
            throw StorageError("DATABASE_URL's sslcert and sslkey go together")
        }
        if self.sslMode == .verifyFull, Self.isIPAddress(host) {
            // The TLS library checks a certificate's DNS names only, and an IP address cannot be the TLS server name.
            throw StorageError(
                "DATABASE_URL's sslmode=verify-full needs the host name of the certificate, not the address \(host)")
        }
        _ = try self.tlsConfiguration()  // a file that cannot be read stops the service now, not at its first query
    }

    /// Reads `DATABASE_URL`, `DATABASE_POOL_SIZE` and `DATABASE_TRANSACTION_TIMEOUT_MS` from the environment's
    /// variables (a service passes `EnvironmentSettings.values`; Storage does not depend on the service runtime).
    /// With `REQUIRE_VERIFIED_TLS=true` (the production overlays) a `DATABASE_URL` other than `sslmode=verify-full`
    /// stops the service at start.
    public init(environment values: [String: String]) throws(StorageError) {
        guard let url = values["DATABASE_URL"], !url.isEmpty else { throw StorageError("DATABASE_URL must be set") }
        try self.init(url: url)
        try self.requireVerifiedTLS(values)
        if let text = values["DATABASE_TRANSACTION_TIMEOUT_MS"], !text.isEmpty {
            guard let milliseconds = Int64(text), milliseconds > 0 else {
                throw StorageError(
                    "DATABASE_TRANSACTION_TIMEOUT_MS must be a positive number of milliseconds, not \(text)")
            }
            self.transactionTimeout = .milliseconds(milliseconds)
        }
        if let text = values["DATABASE_POOL_SIZE"], !text.isEmpty {
            guard let size = Int(text), (1...1000).contains(size) else {
                throw StorageError("DATABASE_POOL_SIZE must be a number of connections from 1 to 1000, not \(text)")
            }
            self.poolSize = size
        }
    }

    /// Refuses a connection weaker than `sslmode=verify-full` when `REQUIRE_VERIFIED_TLS` is `true` (an
    /// unreadable value refuses too: a typo must not turn the requirement off).
    public func requireVerifiedTLS(_ values: [String: String]) throws(StorageError) {
        switch values["REQUIRE_VERIFIED_TLS"] ?? "" {
        case "", "false": return
        case "true":
            guard self.sslMode == .verifyFull else {
                throw StorageError(
                    "REQUIRE_VERIFIED_TLS is true, so DATABASE_URL must use sslmode=verify-full, not "
                        + self.sslMode.rawValue)
            }
        case let other: throw StorageError("REQUIRE_VERIFIED_TLS must be true or false, not \(other)")
        }
    }

    /// The PostgresNIO client configuration: TLS as `sslMode` says, at most `poolSize` connections.
    public var clientConfiguration: PostgresClient.Configuration {
        // The files were read once when the settings were made; a failure now (a file removed since) leaves
        // TLS required with nothing trusted, so the connection fails and says why instead of going out in clear.
        let tls = (try? self.tlsConfiguration()) ?? .require(.makeClientConfiguration())
        var configuration = PostgresClient.Configuration(
            host: self.host, port: self.port, username: self.username, password: self.password, database: self.database,
            tls: tls)
        configuration.options.maximumConnections = self.poolSize
        return configuration
    }

    // MARK: TLS

    /// PostgresNIO's TLS setting for `sslMode` with the CA and client certificate read from their files.
    func tlsConfiguration() throws(StorageError) -> PostgresClient.Configuration.TLS {
        guard let tls = try self.tls() else { return .disable }
        return self.sslMode == .prefer ? .prefer(tls) : .require(tls)
    }

    /// The TLS configuration `sslMode` asks for (nil for `disable`): the trusted CA, the client certificate and
    /// how much of the server's certificate is checked.
    func tls() throws(StorageError) -> TLSConfiguration? {
        guard self.sslMode != .disable else { return nil }
        var tls = TLSConfiguration.makeClientConfiguration()
        do {
            if let file = self.sslRootCert {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(file))
            }
            if let certificate = self.sslCert, let key = self.sslKey {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            }
        } catch {
            throw StorageError("DATABASE_URL's TLS files cannot be read: \(error)")
        }
        switch self.sslMode {
        case .disable, .prefer: tls.certificateVerification = .none
        case .require where self.sslRootCert == nil: tls.certificateVerification = .none
        case .require, .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        return tls
    }

    /// Whether `host` is an IPv4 or IPv6 address literal.
    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return inet_pton(AF_INET, bare, &v4) == 1 || inet_pton(AF_INET6, bare, &v6) == 1
    }

    /// The URL with its password replaced by `***`, for error messages.
    static func redacted(_ text: String) -> String {
        text.replacing(#/(://[^:/@]*:)[^@]*@/#) { $0.output.1 + "***@" }
    }
}

/// A storage failure: a bad setting or an inconsistent database.
public struct StorageError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
