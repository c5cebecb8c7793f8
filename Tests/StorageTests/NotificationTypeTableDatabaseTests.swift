import AppStoreModels
import Entitlements
import JWSVerification
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import Storage
import TestSupport
import Testing

/// The type/subtype table through PostgreSQL: for every row, the stored entitlement row, the outbox rows
/// and the notification log outcome the repository writes.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3)))
struct NotificationTypeTableDatabaseTests {
    let logger: Logger = {
        var logger = Logger(label: "table-database-test")
        logger.logLevel = .error
        return logger
    }()

    /// The row's notification, moved to its own subscription so rows do not interfere.
    static func isolated(_ row: NotificationTypeTable.Row, index: Int) -> (
        VerifiedNotificationRecord, EntitlementState?
    ) {
        var notification = row.notification
        let subject = "row-\(index)"
        notification.payload.notificationUUID = "\(notification.payload.notificationUUID ?? "")-\(index)"
        notification.transaction?.originalTransactionId = subject
        notification.renewalInfo?.originalTransactionId = subject
        let current = row.current.map { state -> EntitlementState in
            var state = state
            state.customer = subject
            state.originalTransactionId = subject
            return state
        }
        return (VerifiedNotificationRecord(notification: notification), current)
    }

    @Test func everyTypeAndSubtypeWritesTheExpectedRowsAndOutbox() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, url in
            let repository = EntitlementRepository(client: client, logger: logger)
            for (index, row) in NotificationTypeTable.rows.enumerated() {
                let (record, current) = Self.isolated(row, index: index)
                if let e = current {
                    try await client.query(
                        """
                        INSERT INTO entitlements (environment, bundle_id, customer, product_id, entitlement_id, active, original_transaction_id,
                                                  source_transaction_id, ownership_type, valid_from, valid_until, last_signed_date)
                        VALUES ('Sandbox', \(NotificationTypeTable.bundleId), \(e.customer), \(e.productId), \(e.productId), \(e.active),
                                \(e.originalTransactionId), \(e.sourceTransactionId), \(e.ownershipType), \(e.validFrom), \(e.validUntil), 0)
                        """, logger: logger)
                }
                let result = try await repository.apply(record, receivedAt: nil)
                #expect(result == .recorded(row.outcome), "\(row)")
                let uuid = record.notification.payload.notificationUUID!
                var outcome = ""
                for try await value in try await client.query(
                    "SELECT outcome FROM notification_log WHERE notification_uuid = \(uuid)", logger: logger
                ).decode(String.self) { outcome = value }
                #expect(outcome == row.outcome.rawValue, "\(row)")
                var active: Bool?
                for try await value in try await client.query(
                    "SELECT active FROM entitlements WHERE customer = \(record.subject)", logger: logger
                ).decode(Bool.self) { active = value }
                #expect(active == (row.active ?? current?.active), "\(row): stored entitlement")
                var events: [String] = []
                for try await value in try await client.query(
                    "SELECT payload->>'eventType' FROM outbox WHERE payload->'cause'->>'notificationUUID' = \(uuid) ORDER BY id",
                    logger: logger
                ).decode(String.self) { events.append(value) }
                #expect(events == row.events, "\(row): outbox rows")
            }
        }
    }
}
