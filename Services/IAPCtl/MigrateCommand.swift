import ArgumentParser
import Foundation
import Logging
import Storage

/// `iapctl migrate`: brings the database schema up to date. Safe to run from several places at once
/// (an advisory lock serializes them) and again at any time (applied steps are recorded).
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Apply pending database migrations.")

    @OptionGroup var database: DatabaseOption

    mutating func run() async throws {
        do {
            let applied = try await self.database.withClient { client, logger in
                try await MigrationRunner().migrate(client: client, logger: logger)
            }
            StandardStreams.writeOutput(applied.isEmpty
                ? "up to date (version \(Migrations.all.count))"
                : "applied \(applied.map(String.init).joined(separator: ", ")); now at version \(Migrations.all.count)")
        } catch let usage as ValidationError {
            throw usage
        } catch {
            StandardStreams.writeError("error: \(String(reflecting: error))")
            throw ExitCode(1)
        }
    }
}
