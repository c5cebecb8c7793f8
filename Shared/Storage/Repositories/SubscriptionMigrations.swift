import EntitlementDecisions
import Entitlements
import Logging
import PostgresNIO

/// The subscriptions the App Store migrated to others (`subscription_migrations`), written by the
/// entitlement-updater under both subjects' locks: the first applied notification of a subscription whose
/// transaction names a `previousOriginalTransactionId` records the migration once, binds the new subscription to the
/// previous one's customer, and moves the previous subscription's entitlement out (the rules write the new one).
/// ``EntitlementPlanner`` decides it from what ``previous(_:of:on:logger:)`` reads.
enum SubscriptionMigrations {
    /// What is stored of `previous`, within the entry's environment and app: whether a migration from it was recorded,
    /// its bound app user and its newest entitlement row.
    static func previous(
        _ previous: String, of entry: NotificationLogEntry, on connection: PostgresConnection, logger: Logger
    ) async throws -> PreviousSubscription {
        let rows = try await connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM subscription_migrations
                           WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId)
                             AND previous_original_transaction_id = \(previous)),
                   (SELECT app_user_id FROM customer_bindings
                    WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId)
                      AND original_transaction_id = \(previous)),
                   e.customer, e.product_id, e.active, e.original_transaction_id, e.source_transaction_id, e.ownership_type,
                   e.valid_from, e.valid_until, e.revoked_at, e.revocation_reason, e.revocation_type, e.entitlement_id
            FROM (SELECT 1) AS one
            LEFT JOIN LATERAL (
                SELECT * FROM entitlements
                WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId) AND original_transaction_id = \(previous)
                ORDER BY updated_at DESC LIMIT 1) AS e ON true
            """, logger: logger)
        var stored = PreviousSubscription(migrated: false, boundCustomer: nil, entitlement: nil)
        for try await row in rows {
            let c = try row.decode(
                (
                    Bool, String?, String?, String?, Bool?, String?, String?, String?, Int64?, Int64?, Int64?, Int32?,
                    String?, String?
                ).self)
            stored.migrated = c.0
            stored.boundCustomer = c.1
            if let customer = c.2, let product = c.3, let active = c.4, let original = c.5, let source = c.6,
                let ownership = c.7
            {
                stored.entitlement = EntitlementState(
                    customer: customer, productId: product, active: active, originalTransactionId: original,
                    sourceTransactionId: source, ownershipType: ownership, validFrom: c.8, validUntil: c.9,
                    revokedAt: c.10, revocationReason: c.11, revocationType: c.12, entitlementId: c.13)
            }
        }
        return stored
    }

    /// Records a migration the planner decided: the row, the new subscription's binding to the customer it keeps
    /// (unless bound already) and the removal of the previous subscription's entitlement rows.
    static func record(_ migration: WavePlan.Migration, on connection: PostgresConnection, logger: Logger) async throws
    {
        let entry = migration.entry, previous = migration.previous
        try await connection.query(
            """
            WITH recorded AS (
                INSERT INTO subscription_migrations (environment, bundle_id, previous_original_transaction_id,
                                                     original_transaction_id, customer, notification_uuid, signed_date)
                VALUES (\(entry.environment), \(entry.bundleId), \(previous), \(entry.subject), \(migration.customer), \(entry.id),
                        \(entry.signedDate))
                ON CONFLICT (environment, bundle_id, previous_original_transaction_id) DO NOTHING
                RETURNING customer
            ), bound AS (
                INSERT INTO customer_bindings (environment, bundle_id, original_transaction_id, app_user_id, source)
                SELECT \(entry.environment), \(entry.bundleId), \(entry.subject), customer, 'migration'
                FROM recorded
                ON CONFLICT (environment, bundle_id, original_transaction_id) DO NOTHING
            )
            DELETE FROM entitlements
            WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId)
              AND original_transaction_id = \(previous) AND EXISTS (SELECT 1 FROM recorded)
            """, logger: logger)
        logger.debug(
            "subscription migrated",
            metadata: ["from": "\(previous)", "to": "\(entry.subject)", "customer": "\(migration.customer)"])
    }
}
