import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import Storage
import TestSupport

/// A month of daily renewals for a steady customer base at compressed time (`entitlements-benchmark soak …`,
/// `Benchmarks/run-soak.sh`): each simulated day every customer renews through the updater's repository (one in a
/// hundred also gets a refund without status, so status requests are written), the publisher's part is played by
/// marking the outbox published, a dead letter or two arrive, and then pruning runs with the production windows,
/// days shortened to `secondsPerDay` real seconds, followed by a plain `VACUUM` (autovacuum's part, done at once so
/// freed space is reused the next day). Prints each day's table sizes: what pruning keeps bounded levels off, what is
/// kept for good (transactions, the log within its 400 days) grows by its bytes per renewal.
enum RetentionSoak {
    static let tables = [
        "outbox", "status_requests", "dead_letters", "notification_log", "transactions", "renewal_infos",
        "entitlements",
    ]

    static func run(databaseURL: String, customers: Int, days: Int, secondsPerDay: Double, logger: Logger) async throws
    {
        let settings = try DatabaseSettings(url: databaseURL)
        try await DatabaseClient.with(settings, logger: logger) { client in
            try await MigrationRunner().migrate(client: client, logger: logger)
            let repository = EntitlementRepository(client: client, logger: logger)
            let pruning = Pruning(client: client, logger: logger)
            var windows = RetentionWindows()
            func scaled(_ window: Duration) -> Duration {
                .milliseconds(Int64(Double(window.components.seconds) / 86_400 * secondsPerDay * 1000))
            }
            windows.publishedOutbox = scaled(windows.publishedOutbox)
            windows.replayedDeadLetters = scaled(windows.replayedDeadLetters)
            windows.deadLetters = scaled(windows.deadLetters)
            windows.statusRequests = scaled(windows.statusRequests)
            windows.notificationLog = scaled(windows.notificationLog)
            print(
                "soak: \(customers) customers renewing daily for \(days) days, a day = \(secondsPerDay) s; "
                    + "windows: outbox 7 d, status requests 7 d, dead letters 180 d (30 d replayed), log 400 d")
            print("day | applied/s | " + Self.tables.joined(separator: " | ") + " | database (MB) | pruned")
            var previous: Double?
            for day in 0..<days {
                let started = ContinuousClock.now
                let records = (0..<customers).flatMap { index -> [VerifiedNotificationRecord] in
                    let original = "soak-\(index)"
                    var today = [
                        day == 0
                            ? VerifiedRecords.step(
                                "SUBSCRIBED", "INITIAL_BUY", original: original, day: 0, expiresDay: 1)
                            : VerifiedRecords.step(
                                "DID_RENEW", original: original, day: Int64(day), expiresDay: Int64(day) + 1)
                    ]
                    if index % 100 == day % 100 && day > 0 {
                        today.append(
                            VerifiedRecords.step(
                                "REFUND", original: original, day: Int64(day), expiresDay: Int64(day) + 1,
                                transactionDay: Int64(day) - 1))
                    }
                    return today
                }
                try await UpdaterLanes.apply(records, repository: repository)
                let applied = Double(records.count) / (ContinuousClock.now - started).realSeconds
                // The day's events are published: the cursor moves past them, as the relay's would.
                try await OutboxCursor.publishEverything(client: client, logger: logger)
                try await client.query(
                    """
                    INSERT INTO dead_letters (topic, partition, "offset", reason, record)
                    VALUES ('appstore.notifications.rejected', 0, \(day), 'chain', jsonb_build_object('body', repeat('x', 2000)))
                    """, logger: logger)
                let pruned = try await pruning.prune(windows: windows, batch: 5_000)
                try await client.query(
                    "VACUUM outbox, outbox_publications, status_requests, dead_letters, notification_log",
                    logger: logger)
                var sizes: [String] = []
                for table in Self.tables {
                    sizes.append(
                        Self.megabytes(try await Self.size("pg_total_relation_size('\(table)')", client, logger)))
                }
                let database = try await Self.size("pg_database_size(current_database())", client, logger)
                let growth = previous.map { " (+\(Self.megabytes(database - $0)))" } ?? ""
                previous = database
                print(
                    "\(day + 1) | \(Int(applied)) | " + sizes.joined(separator: " | ") + " | "
                        + Self.megabytes(database) + growth + " | "
                        + Pruning.Table.allCases.map { "\($0.rawValue) \(pruned[$0] ?? 0)" }.joined(separator: ", "))
                // The rest of the simulated day passes.
                let elapsed = (ContinuousClock.now - started).realSeconds
                if elapsed < secondsPerDay {
                    try await Task.sleep(for: .milliseconds(Int64((secondsPerDay - elapsed) * 1000)))
                }
            }
        }
    }

    /// A size in bytes from an SQL expression.
    static func size(_ expression: String, _ client: PostgresClient, _ logger: Logger) async throws -> Double {
        var bytes = 0.0
        for try await value in try await client.query(
            PostgresQuery(unsafeSQL: "SELECT (\(expression))::bigint"), logger: logger
        )
        .decode(Int64.self) {
            bytes = Double(value)
        }
        return bytes
    }

    /// Megabytes with one decimal.
    static func megabytes(_ bytes: Double) -> String { String(format: "%.1f", bytes / 1_048_576) }
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var realSeconds: Double { Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18 }
}
