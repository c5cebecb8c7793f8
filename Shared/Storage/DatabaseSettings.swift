import Foundation
public import PostgresNIO

/// Where the database is: `DATABASE_URL`, `postgres://user[:password]@host[:port]/database`.
public struct DatabaseSettings: Sendable, Hashable {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// How long one unit of database work (a transaction) may take before the caller gives up on it and retries
    /// on a fresh connection (`DATABASE_TRANSACTION_TIMEOUT_MS`): a query on a connection cut by a server crash
    /// can otherwise wait for ever.
    public var transactionTimeout: Duration = .seconds(30)

    /// Parses a `postgres://` URL.
    public init(url text: String) throws(StorageError) {
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? ""),
            let host = url.host, !host.isEmpty, let username = url.user
        else {
            throw StorageError(
                "DATABASE_URL must look like postgres://user[:password]@host[:port]/database, not \(text)")
        }
        self.host = host
        self.port = url.port ?? 5432
        self.username = username
        self.password = url.password
        let path = url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        self.database = path.isEmpty ? username : path
    }

    /// Reads `DATABASE_URL` and `DATABASE_TRANSACTION_TIMEOUT_MS` from the environment's variables (a service
    /// passes `EnvironmentSettings.values`; Storage does not depend on the service runtime).
    public init(environment values: [String: String]) throws(StorageError) {
        guard let url = values["DATABASE_URL"], !url.isEmpty else { throw StorageError("DATABASE_URL must be set") }
        try self.init(url: url)
        if let text = values["DATABASE_TRANSACTION_TIMEOUT_MS"], !text.isEmpty {
            guard let milliseconds = Int64(text), milliseconds > 0 else {
                throw StorageError(
                    "DATABASE_TRANSACTION_TIMEOUT_MS must be a positive number of milliseconds, not \(text)")
            }
            self.transactionTimeout = .milliseconds(milliseconds)
        }
    }

    /// The PostgresNIO client configuration (no TLS: loopback and in-cluster connections).
    public var clientConfiguration: PostgresClient.Configuration {
        PostgresClient.Configuration(
            host: self.host, port: self.port, username: self.username, password: self.password, database: self.database,
            tls: .disable)
    }
}

/// A storage failure: a bad setting or an inconsistent database.
public struct StorageError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
