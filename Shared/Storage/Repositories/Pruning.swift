public import Foundation
public import Logging
public import PostgresNIO

/// How long the pipeline keeps what it no longer needs to work (docs/operations.md, "Retention"): each window is
/// chosen against what still reads the rows.
public struct RetentionWindows: Sendable, Hashable {
    /// Published outbox rows, by when they were written (the events are in Kafka; the rows are the relay's and an
    /// audit of recent events).
    public var publishedOutbox: Duration = .seconds(7 * 86_400)
    /// The relay's publications (one row per relay transaction: when it was acknowledged, and the cursor). Only the
    /// newest is needed; the rest tell when recent events went out, at up to a few hundred rows a second under load.
    public var outboxPublications: Duration = .seconds(3_600)
    /// Dead letters replayed (their notification went through again).
    public var replayedDeadLetters: Duration = .seconds(30 * 86_400)
    /// Dead letters never replayed: kept as long as Apple's notification history could still bring them back.
    public var deadLetters: Duration = .seconds(180 * 86_400)
    /// Status requests published to refund-resolver, by when they were written (their answer came back as a status
    /// snapshot, logged).
    public var statusRequests: Duration = .seconds(7 * 86_400)
    /// The notification log: the idempotency record (a repeat is a duplicate only while its entry exists) and the
    /// audit of what happened. Each subject's newest entry that moved it is kept whatever its age (it orders what
    /// comes after).
    public var notificationLog: Duration = .seconds(400 * 86_400)

    /// Apple's notification history reaches back 180 days and Apple retries a notification for 3: a log entry
    /// younger than that may be delivered or backfilled again, and only the log makes it a duplicate.
    public static let minimumNotificationLog: Duration = .seconds(183 * 86_400)

    /// The defaults.
    public init() {}
}

/// Removes what is older than its ``RetentionWindows`` window, table by table, in batches of at most `batch` rows,
/// each batch its own short statement (no long transaction, no lock beyond the rows it deletes), until nothing older
/// is left. Run by the entitlement-updater on a schedule and by `iapctl prune`. Never removes an outbox row or a
/// status request not yet published, nor a subject's newest log entry that moved it.
public struct Pruning: Sendable {
    /// The tables pruned, in the order they are pruned.
    public enum Table: String, CaseIterable, Sendable {
        case outbox
        case outboxPublications = "outbox_publications"
        case deadLetters = "dead_letters"
        case statusRequests = "status_requests"
        case notificationLog = "notification_log"
    }

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Prunes every table as of `now`; `removed` hears each batch (for metrics). Returns the rows removed per table.
    public func prune(
        windows: RetentionWindows, batch: Int, now: Date = Date(),
        removed: @Sendable (Table, Int) -> Void = { _, _ in }
    ) async throws -> [Table: Int] {
        var totals: [Table: Int] = [:]
        for table in Table.allCases {
            var total = 0
            while true {
                let count = try await self.pruneBatch(table, windows: windows, batch: batch, now: now)
                if count > 0 { removed(table, count) }
                total += count
                if count < batch { break }
            }
            totals[table] = total
        }
        return totals
    }

    /// One batch of one table; returns how many rows it removed.
    func pruneBatch(_ table: Table, windows: RetentionWindows, batch: Int, now: Date) async throws -> Int {
        func cutoff(_ window: Duration) -> Date { now.addingTimeInterval(-Double(window.components.seconds)) }
        let rows: PostgresRowSequence
        switch table {
        case .outbox:
            rows = try await self.client.query(
                """
                DELETE FROM outbox WHERE id IN (
                    SELECT id FROM outbox
                    WHERE created_at < \(cutoff(windows.publishedOutbox))
                      AND (writer_xid, id) <= (\(unescaped: OutboxRelay.cursor))
                    LIMIT \(batch))
                RETURNING 1
                """, logger: self.logger)
        case .outboxPublications:
            // The newest publication is the cursor: it stays whatever its age.
            rows = try await self.client.query(
                """
                DELETE FROM outbox_publications WHERE (through_xid, through_id) IN (
                    SELECT through_xid, through_id FROM outbox_publications
                    WHERE published_at < \(cutoff(windows.outboxPublications))
                      AND (through_xid, through_id) < (\(unescaped: OutboxRelay.cursor))
                    LIMIT \(batch))
                RETURNING 1
                """, logger: self.logger)
        case .deadLetters:
            rows = try await self.client.query(
                """
                DELETE FROM dead_letters WHERE ctid IN (
                    SELECT ctid FROM dead_letters
                    WHERE recorded_at < \(cutoff(windows.deadLetters))
                       OR (replayed_at IS NOT NULL AND replayed_at < \(cutoff(windows.replayedDeadLetters)))
                    LIMIT \(batch))
                RETURNING 1
                """, logger: self.logger)
        case .statusRequests:
            rows = try await self.client.query(
                """
                DELETE FROM status_requests WHERE id IN (
                    SELECT id FROM status_requests
                    WHERE created_at < \(cutoff(windows.statusRequests))
                      AND request_id NOT IN (SELECT event_id FROM outbox_pending)
                    LIMIT \(batch))
                RETURNING 1
                """, logger: self.logger)
        case .notificationLog:
            rows = try await self.client.query(
                """
                DELETE FROM notification_log WHERE ctid IN (
                    SELECT l.ctid FROM notification_log l
                    WHERE l.applied_at < \(cutoff(windows.notificationLog))
                      AND (NOT l.advances_subject OR EXISTS (
                          SELECT 1 FROM notification_log n
                          WHERE n.environment = l.environment AND n.bundle_id = l.bundle_id AND n.subject = l.subject
                            AND n.advances_subject AND n.signed_date > l.signed_date))
                    LIMIT \(batch))
                RETURNING 1
                """, logger: self.logger)
        }
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }
}
