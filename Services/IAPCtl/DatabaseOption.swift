import ArgumentParser
import Foundation
import Logging
import PostgresNIO
import Storage

/// `--database-url` (default `$DATABASE_URL`), for the commands that work on PostgreSQL.
struct DatabaseOption: ParsableArguments {
    @Option(
        name: .customLong("database-url"),
        help: "postgres://user[:password]@host[:port]/database[?sslmode=…&sslrootcert=…] (default: $DATABASE_URL).")
    var databaseURL: String?

    /// Runs `body` with a client of the database (a usage error when no URL is given or it is malformed).
    func withClient<T: Sendable>(_ body: @Sendable (PostgresClient, Logger) async throws -> T) async throws -> T {
        guard let url = self.databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"] else {
            throw ValidationError("--database-url or DATABASE_URL is required")
        }
        let settings: DatabaseSettings
        do {
            settings = try DatabaseSettings(url: url)
            try settings.requireVerifiedTLS(ProcessInfo.processInfo.environment)
        } catch { throw ValidationError(error.description) }
        var logger = Logger(label: "iapctl")
        logger.logLevel = .warning
        let quiet = logger
        // One connection first: a wrong password, CA or host name is reported with its reason, not as a pool that
        // gave up.
        try await DatabaseClient.check(settings, logger: quiet)
        return try await DatabaseClient.with(settings, logger: quiet) { client in try await body(client, quiet) }
    }
}
