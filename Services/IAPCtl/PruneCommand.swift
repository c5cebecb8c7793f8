import ArgumentParser
import Foundation
import NotificationPipeline
import ServiceRuntime
import Storage

/// `iapctl prune`: removes once, now, what is older than its retention window (the same windows and batches the
/// entitlement-updater prunes with on its schedule: `RETAIN_*`, `PRUNE_BATCH`), and prints the rows removed per
/// table as JSON.
struct PruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Remove published outbox rows, old dead letters and status requests, and old log entries now.",
        discussion: """
            Windows come from RETAIN_PUBLISHED_OUTBOX (7d), RETAIN_REPLAYED_DEAD_LETTERS (30d), RETAIN_DEAD_LETTERS \
            (180d), RETAIN_STATUS_REQUESTS (7d) and RETAIN_NOTIFICATION_LOG (400d, at least 183d); batches of \
            PRUNE_BATCH rows (5000). See docs/operations.md, "Retention".
            """)

    @OptionGroup var database: DatabaseOption

    mutating func run() async throws {
        let settings: PruneSettings
        do {
            settings = try PruneSettings(EnvironmentSettings(ProcessInfo.processInfo.environment))
        } catch {
            throw ValidationError(error.description)
        }
        let totals = try await self.database.withClient { client, logger in
            try await Pruning(client: client, logger: logger).prune(windows: settings.windows, batch: settings.batch)
        }
        let json = try JSONSerialization.data(
            withJSONObject: Dictionary(uniqueKeysWithValues: totals.map { ($0.key.rawValue, $0.value) }),
            options: [.sortedKeys])
        StandardStreams.writeOutput(String(decoding: json, as: UTF8.self))
    }
}
