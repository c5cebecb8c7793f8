public import Logging
public import PostgresNIO

/// A large app's year of rows, generated inside PostgreSQL (`INSERT … SELECT` over `generate_series`, no round trip
/// per row) in the shape the entitlement-updater writes for ``VerifiedRecords``' notifications: per customer
/// `scale-<n>` (Sandbox, `com.example.app`) a purchase and `renewals` monthly renewals, each a transaction and a log
/// entry as the repository stores them, one subscription view, renewal info and entitlement, an app user binding for
/// one customer in three, and the published events of the last week for one in four. `ScaleDataShapeTests` proves the
/// rows identical in shape to what the repository writes for the same notifications.
public enum ScaleData {
    static let day: Int64 = 86_400_000

    /// Generates customers `range` (their numbers), their purchase on day 0 and `renewals` renewals 30 days apart,
    /// the first purchase `start` (epoch ms). One customer in ten lapsed (its last period ended, inactive).
    public static func generate(
        customers range: Range<Int>, renewals: Int, start: Int64, client: PostgresClient, logger: Logger
    ) async throws {
        let first = range.lowerBound
        let last = range.upperBound - 1
        let day = Self.day
        // k = 0 is the purchase, k ≥ 1 the renewals; the lapsed customers' last period ends before now.
        try await client.query(
            """
            INSERT INTO transactions (environment, bundle_id, transaction_id, original_transaction_id, product_id, product_type,
                                      ownership_type, purchase_date, expires_date, signed_date)
            SELECT 'Sandbox', 'com.example.app', 'scale-' || c || '-t' || (k * 30), 'scale-' || c, 'pro', 'Auto-Renewable Subscription',
                   'PURCHASED', \(start) + k * 30 * \(day), \(start) + (k + 1) * 30 * \(day), \(start) + k * 30 * \(day)
            FROM generate_series(\(first), \(last)) AS c, generate_series(0, \(renewals)) AS k
            """, logger: logger)
        try await client.query(
            """
            INSERT INTO notification_log (notification_uuid, notification_type, subtype, subject, environment, bundle_id, signed_date,
                                          applied_at, outcome, detail, advances_subject)
            SELECT 'scale-' || c || '-' || CASE WHEN k = 0 THEN 'SUBSCRIBED-INITIAL_BUY' ELSE 'DID_RENEW-none' END || '-' || (k * 30),
                   CASE WHEN k = 0 THEN 'SUBSCRIBED' ELSE 'DID_RENEW' END, CASE WHEN k = 0 THEN 'INITIAL_BUY' END,
                   'scale-' || c, 'Sandbox', 'com.example.app', \(start) + k * 30 * \(day),
                   to_timestamp((\(start) + k * 30 * \(day)) / 1000.0), 'applied',
                   CASE WHEN k = 0 THEN 'granted by SUBSCRIBED' ELSE 'granted by DID_RENEW' END, true
            FROM generate_series(\(first), \(last)) AS c, generate_series(0, \(renewals)) AS k
            """, logger: logger)
        try await client.query(
            """
            INSERT INTO renewal_infos (environment, bundle_id, original_transaction_id, grace_period_expires_date, signed_date)
            SELECT 'Sandbox', 'com.example.app', 'scale-' || c, \(start) + \(renewals) * 30 * \(day) + 16 * \(day),
                   \(start) + \(renewals) * 30 * \(day)
            FROM generate_series(\(first), \(last)) AS c
            """, logger: logger)
        try await client.query(
            """
            INSERT INTO customer_bindings (environment, bundle_id, original_transaction_id, app_user_id, source)
            SELECT 'Sandbox', 'com.example.app', 'scale-' || c, 'user-' || c, 'signed-transaction'
            FROM generate_series(\(first), \(last)) AS c WHERE c % 3 = 0
            """, logger: logger)
        try await client.query(
            """
            INSERT INTO subscriptions (environment, bundle_id, original_transaction_id, customer, product_id, expires_date,
                                       grace_period_expires_date, last_signed_date)
            SELECT 'Sandbox', 'com.example.app', 'scale-' || c, CASE WHEN c % 3 = 0 THEN 'user-' || c ELSE 'scale-' || c END, 'pro',
                   \(start) + (\(renewals) + 1) * 30 * \(day) - CASE WHEN c % 10 = 0 THEN 30 * \(day) ELSE 0 END,
                   \(start) + \(renewals) * 30 * \(day) + 16 * \(day), \(start) + \(renewals) * 30 * \(day)
            FROM generate_series(\(first), \(last)) AS c
            """, logger: logger)
        try await client.query(
            """
            INSERT INTO entitlements (environment, bundle_id, customer, product_id, entitlement_id, active, original_transaction_id,
                                      source_transaction_id, ownership_type, valid_from, valid_until, last_signed_date)
            SELECT 'Sandbox', 'com.example.app', CASE WHEN c % 3 = 0 THEN 'user-' || c ELSE 'scale-' || c END, 'pro', 'pro',
                   c % 10 <> 0, 'scale-' || c, 'scale-' || c || '-t' || (\(renewals) * 30), 'PURCHASED',
                   \(start) + \(renewals) * 30 * \(day),
                   \(start) + (\(renewals) + 1) * 30 * \(day) - CASE WHEN c % 10 = 0 THEN 30 * \(day) ELSE 0 END,
                   \(start) + \(renewals) * 30 * \(day)
            FROM generate_series(\(first), \(last)) AS c
            """, logger: logger)
        try await client.query(
            """
            INSERT INTO outbox (event_id, topic, key, payload, environment, bundle_id)
            SELECT md5('scale-' || c || '-renewed')::uuid::text, 'entitlements.changes', 'Sandbox/com.example.app/scale-' || c,
                   jsonb_build_object('eventId', md5('scale-' || c || '-renewed')::uuid::text, 'stream', 'changes',
                                      'eventType', 'entitlement.updated', 'schemaVersion', 2, 'subject', 'scale-' || c,
                                      'transactionId', 'scale-' || c || '-t' || (\(renewals) * 30),
                                      'originalTransactionId', 'scale-' || c, 'entitlementId', 'pro',
                                      'productType', 'Auto-Renewable Subscription', 'ownershipType', 'PURCHASED',
                                      'purchaseDate', \(start) + \(renewals) * 30 * \(day),
                                      'expirationDate', \(start) + (\(renewals) + 1) * 30 * \(day),
                                      'customer', 'scale-' || c, 'productId', 'pro', 'environment', 'Sandbox',
                                      'bundleId', 'com.example.app', 'store', 'APP_STORE', 'outOfOrder', false,
                                      'occurredAt', \(start) + \(renewals) * 30 * \(day),
                                      'cause', jsonb_build_object('notificationUUID', 'scale-' || c || '-DID_RENEW-none-' || (\(renewals) * 30),
                                                                  'notificationType', 'DID_RENEW'),
                                      'state', jsonb_build_object('customer', 'scale-' || c, 'productId', 'pro', 'active', true,
                                                                  'originalTransactionId', 'scale-' || c,
                                                                  'sourceTransactionId', 'scale-' || c || '-t' || (\(renewals) * 30),
                                                                  'ownershipType', 'PURCHASED', 'entitlementId', 'pro')),
                   'Sandbox', 'com.example.app'
            FROM generate_series(\(first), \(last)) AS c WHERE c % 4 = 0
            """, logger: logger)
        // Those events were published long ago: the relay's cursor is past them.
        try await OutboxCursor.publishEverything(client: client, logger: logger)
    }
}
