import ArgumentParser
import Foundation
import Logging
import PostgresNIO
import Storage

/// `--database-url` (default `$DATABASE_URL`), for the commands that work on PostgreSQL.
struct DatabaseOption: ParsableArguments {
    @Option(
        name: .customLong("database-url"),
        help: "postgres://user[:password]@host[:port]/database (default: $DATABASE_URL).")
    var databaseURL: String?

    /// Runs `body` with a client of the database (a usage error when no URL is given or it is malformed).
    func withClient<T: Sendable>(_ body: @Sendable (PostgresClient, Logger) async throws -> T) async throws -> T {
        guard let url = self.databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"] else {
            throw ValidationError("--database-url or DATABASE_URL is required")
        }
        let settings: DatabaseSettings
        do { settings = try DatabaseSettings(url: url) } catch { throw ValidationError(error.description) }
        var logger = Logger(label: "iapctl")
        logger.logLevel = .warning
        let quiet = logger
        return try await DatabaseClient.with(settings, logger: quiet) { client in try await body(client, quiet) }
    }
}
