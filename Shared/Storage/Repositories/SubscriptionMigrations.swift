import Entitlements
import Logging
import PostgresNIO

/// The subscriptions the App Store migrated to others (`subscription_migrations`), written by the
/// entitlement-updater under both subjects' locks: the first applied notification of a subscription whose
/// transaction names a `previousOriginalTransactionId` records the migration once, binds the new subscription to the
/// previous one's customer, and moves the previous subscription's entitlement out (the rules write the new one).
enum SubscriptionMigrations {
    /// Records that the App Store migrated `previous` to the entry's subject, binds the subject to the previous
    /// subscription's customer when the subject is not bound yet, and removes the previous subscription's
    /// entitlement rows. The customer is the previous subscription's bound app user, else its newest entitlement's
    /// customer, else `fallback` (nothing of it stored yet: its notifications may come later). Returns the
    /// migration, with the entitlement removed, when this call recorded it; nil when it was recorded before.
    static func record(
        from previous: String, to entry: EntitlementRepository.LogEntry, fallback: String,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> SubjectMigration? {
        let rows = try await connection.query(
            """
            WITH previous AS (
                SELECT (SELECT app_user_id FROM customer_bindings
                        WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId)
                          AND original_transaction_id = \(previous)) AS bound,
                       e.*
                FROM (SELECT 1) AS one
                LEFT JOIN LATERAL (
                    SELECT customer, product_id, active, original_transaction_id, source_transaction_id, ownership_type,
                           valid_from, valid_until, revoked_at, revocation_reason, revocation_type, entitlement_id
                    FROM entitlements
                    WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId)
                      AND original_transaction_id = \(previous)
                    ORDER BY updated_at DESC LIMIT 1) AS e ON true
            ), recorded AS (
                INSERT INTO subscription_migrations (environment, bundle_id, previous_original_transaction_id,
                                                     original_transaction_id, customer, notification_uuid, signed_date)
                SELECT \(entry.environment), \(entry.bundleId), \(previous), \(entry.subject),
                       coalesce(previous.bound, previous.customer, \(fallback)), \(entry.id), \(entry.signedDate)
                FROM previous
                ON CONFLICT (environment, bundle_id, previous_original_transaction_id) DO NOTHING
                RETURNING customer
            ), bound AS (
                INSERT INTO customer_bindings (environment, bundle_id, original_transaction_id, app_user_id, source)
                SELECT \(entry.environment), \(entry.bundleId), \(entry.subject), customer, 'migration'
                FROM recorded
                ON CONFLICT (environment, bundle_id, original_transaction_id) DO NOTHING
            ), moved AS (
                DELETE FROM entitlements
                WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId)
                  AND original_transaction_id = \(previous) AND EXISTS (SELECT 1 FROM recorded)
            )
            SELECT recorded.customer, previous.customer, previous.product_id, previous.active,
                   previous.original_transaction_id, previous.source_transaction_id, previous.ownership_type,
                   previous.valid_from, previous.valid_until, previous.revoked_at, previous.revocation_reason,
                   previous.revocation_type, previous.entitlement_id
            FROM recorded, previous
            """, logger: logger)
        for try await row in rows {
            let c = try row.decode(
                (
                    String?, String?, String?, Bool?, String?, String?, String?, Int64?, Int64?, Int64?, Int32?,
                    String?, String?
                ).self)
            var migration = SubjectMigration(
                previousOriginalTransactionId: previous, customer: c.0, previousEntitlement: nil)
            if let customer = c.1, let product = c.2, let active = c.3, let original = c.4, let source = c.5,
                let ownership = c.6
            {
                migration.previousEntitlement = EntitlementState(
                    customer: customer, productId: product, active: active, originalTransactionId: original,
                    sourceTransactionId: source, ownershipType: ownership, validFrom: c.7, validUntil: c.8,
                    revokedAt: c.9, revocationReason: c.10, revocationType: c.11, entitlementId: c.12)
            }
            logger.debug(
                "subscription migrated",
                metadata: ["from": "\(previous)", "to": "\(entry.subject)", "customer": "\(c.0 ?? "-")"])
            return migration
        }
        return nil
    }
}
