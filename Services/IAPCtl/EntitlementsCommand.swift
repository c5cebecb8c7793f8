import ArgumentParser
import Foundation
import Logging
import Storage

/// `iapctl entitlements CUSTOMER|ORIGINAL_TRANSACTION_ID`: the current entitlements and subscriptions of a
/// customer (appAccountToken or originalTransactionId) and the notifications that shaped them, as JSON.
struct EntitlementsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitlements", abstract: "Show a customer's entitlements, subscriptions and notification history."
    )

    @OptionGroup var database: DatabaseOption

    @Argument(help: "A customer (appAccountToken) or an originalTransactionId.")
    var who: String

    mutating func run() async throws {
        let who = self.who
        let description = try await self.database.withClient { client, logger in
            try await EntitlementQueries(client: client, logger: logger).describe(who)
        }
        let json = try JSONSerialization.data(
            withJSONObject: description, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        StandardStreams.writeOutput(String(decoding: json, as: UTF8.self))
        if description["entitlements"]?.isEmpty ?? true && description["history"]?.isEmpty ?? true {
            StandardStreams.writeError("nothing is stored for \(who)")
            throw ExitCode(1)
        }
    }
}
