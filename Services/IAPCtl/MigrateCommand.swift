import ArgumentParser
import Foundation
import Logging
import Storage

/// `iapctl migrate`: brings the database schema up to date. Safe to run from several places at once
/// (an advisory lock serializes them) and again at any time (applied steps are recorded).
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Apply pending database migrations.")

    @Option(name: .customLong("database-url"), help: "postgres://user[:password]@host[:port]/database (default: $DATABASE_URL).")
    var databaseURL: String?

    mutating func run() async throws {
        guard let url = self.databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"] else {
            throw ValidationError("--database-url or DATABASE_URL is required")
        }
        let settings: DatabaseSettings
        do {
            settings = try DatabaseSettings(url: url)
        } catch {
            throw ValidationError(error.description)
        }
        let logger: Logger = {
            var logger = Logger(label: "iapctl")
            logger.logLevel = .warning
            return logger
        }()
        do {
            let applied = try await DatabaseClient.with(settings, logger: logger) { client in
                try await MigrationRunner().migrate(client: client, logger: logger)
            }
            StandardStreams.writeOutput(applied.isEmpty
                ? "up to date (version \(Migrations.all.count))"
                : "applied \(applied.map(String.init).joined(separator: ", ")); now at version \(Migrations.all.count)")
        } catch {
            StandardStreams.writeError("error: \(String(reflecting: error))")
            throw ExitCode(1)
        }
    }
}
