import ArgumentParser
import Foundation
import Logging
import Storage

/// `iapctl entitlements CUSTOMER|ORIGINAL_TRANSACTION_ID`: the current entitlements and subscriptions of a
/// customer (appAccountToken or originalTransactionId) and the notifications that shaped them, as JSON.
struct EntitlementsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitlements", abstract: "Show a customer's entitlements, subscriptions and notification history.")

    @Option(name: .customLong("database-url"), help: "postgres://… (default: $DATABASE_URL).")
    var databaseURL: String?

    @Argument(help: "A customer (appAccountToken) or an originalTransactionId.")
    var who: String

    mutating func run() async throws {
        guard let url = self.databaseURL ?? ProcessInfo.processInfo.environment["DATABASE_URL"] else {
            throw ValidationError("--database-url or DATABASE_URL is required")
        }
        let settings: DatabaseSettings
        do { settings = try DatabaseSettings(url: url) } catch { throw ValidationError(error.description) }
        let logger: Logger = {
            var logger = Logger(label: "iapctl")
            logger.logLevel = .warning
            return logger
        }()
        let who = self.who
        let description = try await DatabaseClient.with(settings, logger: logger) { client in
            try await EntitlementQueries(client: client, logger: logger).describe(who)
        }
        let json = try JSONSerialization.data(withJSONObject: description, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        StandardStreams.writeOutput(String(decoding: json, as: UTF8.self))
        if description["entitlements"]?.isEmpty ?? true && description["history"]?.isEmpty ?? true {
            StandardStreams.writeError("nothing is stored for \(who)")
            throw ExitCode(1)
        }
    }
}
