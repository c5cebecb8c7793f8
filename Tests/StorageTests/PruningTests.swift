import Entitlements
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import Storage
import Synchronization
import TestSupport
import Testing

/// Pruning in a real PostgreSQL written by the updater's repository: what is older than its window goes, in bounded
/// batches; what is still needed stays (unpublished outbox rows and status requests, young rows, each subject's
/// newest log entry that moved it, which keeps a late notification stale).
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct PruningTests {
    let logger: Logger = {
        var logger = Logger(label: "pruning-test")
        logger.logLevel = .error
        return logger
    }()

    /// One number from a query.
    func count(_ query: PostgresQuery, client: PostgresClient) async throws -> Int {
        var value = 0
        for try await count in try await client.query(query, logger: self.logger).decode(Int.self) { value = count }
        return value
    }

    @Test func oldRowsGoInBatchesAndWhatIsNeededStays() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, _ in
            let repository = EntitlementRepository(client: client, logger: logger)
            // Subject old-1: a purchase, a renewal that moved it, a late (stale) one; all applied long ago.
            let subscribed = VerifiedRecords.step(
                "SUBSCRIBED", "INITIAL_BUY", original: "old-1", day: 0, expiresDay: 30)
            let renewed = VerifiedRecords.step("DID_RENEW", original: "old-1", day: 30, expiresDay: 60)
            let late = VerifiedRecords.step(
                "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", original: "old-1", day: 20)
            for record in [subscribed, renewed, late] {
                _ = try await repository.apply(record, receivedAt: nil)
            }
            // Subject young-1: applied now. A refund without status writes a status request.
            _ = try await repository.apply(
                VerifiedRecords.step("SUBSCRIBED", "INITIAL_BUY", original: "young-1", day: 0, expiresDay: 30),
                receivedAt: nil)
            _ = try await repository.apply(
                VerifiedRecords.step("REFUND", original: "young-1", day: 5, expiresDay: 30), receivedAt: nil)
            try await client.query(
                "UPDATE notification_log SET applied_at = now() - interval '500 days' WHERE subject = 'old-1'",
                logger: logger)
            // Outbox: old-1's events written 8 days ago, young-1's now, all published (the cursor is past them);
            // then one event written 30 days ago (its clock says so) and never published.
            try await client.query(
                "UPDATE outbox SET created_at = now() - interval '8 days' WHERE key LIKE '%old-1'", logger: logger)
            try await OutboxCursor.publishEverything(client: client, logger: logger)
            try await client.query(
                """
                INSERT INTO outbox (event_id, topic, key, payload, created_at)
                VALUES ('never-published', 't', 'k', '{}', now() - interval '30 days')
                """, logger: logger)
            // Publications: the migration's first and the cursor, both two hours old; the cursor stays whatever its age.
            try await client.query(
                "UPDATE outbox_publications SET published_at = now() - interval '2 hours'", logger: logger)
            // young-1's status request was written 8 days ago, and its event is published.
            try await client.query(
                "UPDATE status_requests SET created_at = now() - interval '8 days'", logger: logger)
            // Dead letters: replayed 31 days ago, recorded 181 days ago, recorded yesterday.
            for (offset, recorded, replayed) in [(1, "40 days", "31 days"), (2, "181 days", ""), (3, "1 day", "")] {
                try await client.query(
                    """
                    INSERT INTO dead_letters (topic, partition, "offset", reason, record, recorded_at, replayed_at)
                    VALUES ('appstore.notifications.rejected', 0, \(offset), 'chain', '{}'::jsonb,
                            now() - \(recorded)::interval, CASE WHEN \(replayed) = '' THEN NULL ELSE now() - \(replayed)::interval END)
                    """, logger: logger)
            }
            let oldEvents = try await self.count(
                "SELECT count(*)::int FROM outbox WHERE key LIKE '%old-1'", client: client)
            #expect(oldEvents >= 2)

            let batches = BatchLog()
            let totals = try await Pruning(client: client, logger: logger).prune(
                windows: RetentionWindows(), batch: 1, removed: { table, count in batches.add(table, count) })

            #expect(totals[.outbox] == oldEvents, "published, written more than 7 days ago")
            #expect(batches.count(of: .outbox) == oldEvents, "one row per batch of one")
            #expect(
                try await self.count("SELECT count(*)::int FROM outbox_pending", client: client) == 1,
                "never a row not yet published, however old")
            #expect(totals[.outboxPublications] == 1, "the first publication; the newest is the cursor")
            #expect(try await OutboxRelay(client: client, logger: logger).backlog() == 1)
            #expect(totals[.statusRequests] == 1)
            #expect(totals[.deadLetters] == 2)
            #expect(
                try await self.count(#"SELECT "offset"::int FROM dead_letters"#, client: client) == 3,
                "yesterday's dead letter stays")
            #expect(totals[.notificationLog] == 2, "old-1's purchase and late entry; its newest renewal stays")
            #expect(
                try await self.count(
                    "SELECT count(*)::int FROM notification_log WHERE subject = 'old-1' AND advances_subject",
                    client: client)
                    == 1)
            #expect(
                try await self.count(
                    "SELECT count(*)::int FROM notification_log WHERE subject = 'young-1'", client: client)
                    == 2, "young entries stay")

            // The kept entry still makes a repeat a duplicate, and orders what comes after it.
            #expect(try await repository.apply(renewed, receivedAt: nil) == .duplicate)
            #expect(try await repository.apply(late, receivedAt: nil) == .recorded(.stale))
            let again = try await Pruning(client: client, logger: logger).prune(windows: RetentionWindows(), batch: 100)
            #expect(again.values.allSatisfy { $0 == 0 }, "nothing left to prune: \(again)")
        }
    }
}

/// The batches a pruning pass reported, by table.
final class BatchLog: Sendable {
    private let batches = Mutex<[Pruning.Table: Int]>([:])
    func add(_ table: Pruning.Table, _ count: Int) { self.batches.withLock { $0[table, default: 0] += 1 } }
    func count(of table: Pruning.Table) -> Int { self.batches.withLock { $0[table] ?? 0 } }
}
