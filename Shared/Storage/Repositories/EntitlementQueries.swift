public import Logging
public import PostgresNIO

/// Read-only views for operators (`iapctl entitlements`): a customer's or subscription's current state and history.
public struct EntitlementQueries: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Everything stored about a customer or an original transaction id, as JSON-ready dictionaries:
    /// `entitlements`, `subscriptions` and `history` (the notification log of the subscriptions found), each row
    /// naming its environment and app (a customer may have both Sandbox and Production rows).
    public func describe(_ who: String) async throws -> [String: [[String: String]]] {
        let entitlements = try await self.rows(
            """
            SELECT environment, bundle_id, customer, product_id, entitlement_id, active::text, original_transaction_id, source_transaction_id, ownership_type,
                   valid_from::text, valid_until::text, revoked_at::text, revocation_reason::text, revocation_type, last_signed_date::text
            FROM entitlements WHERE customer = \(who) OR original_transaction_id = \(who) ORDER BY environment, bundle_id, product_id
            """,
            columns: [
                "environment", "bundleId", "customer", "productId", "entitlementId", "active", "originalTransactionId",
                "sourceTransactionId", "ownershipType",
                "validFrom", "validUntil", "revokedAt", "revocationReason", "revocationType", "lastSignedDate",
            ])
        let originals = Set(entitlements.compactMap { $0["originalTransactionId"] } + [who])
        let subscriptions = try await self.rows(
            """
            SELECT environment, bundle_id, original_transaction_id, customer, product_id, status::text, auto_renew_status::text, auto_renew_product_id,
                   expires_date::text, grace_period_expires_date::text, is_in_billing_retry::text, last_signed_date::text
            FROM subscriptions WHERE original_transaction_id = ANY(\(Array(originals))) OR customer = \(who) ORDER BY environment, bundle_id, original_transaction_id
            """,
            columns: [
                "environment", "bundleId", "originalTransactionId", "customer", "productId", "status",
                "autoRenewStatus", "autoRenewProductId",
                "expiresDate", "gracePeriodExpiresDate", "isInBillingRetry", "lastSignedDate",
            ])
        let history = try await self.rows(
            """
            SELECT environment, bundle_id, signed_date::text, notification_type, COALESCE(subtype, ''), notification_uuid, outcome,
                   COALESCE(detail, ''), subject
            FROM notification_log WHERE subject = ANY(\(Array(originals))) ORDER BY environment, signed_date, notification_uuid
            """,
            columns: [
                "environment", "bundleId", "signedDate", "notificationType", "subtype", "notificationUUID", "outcome",
                "detail", "subject",
            ])
        return ["entitlements": entitlements, "subscriptions": subscriptions, "history": history]
    }

    /// Runs a query whose columns are all text (or null) and names them.
    private func rows(_ query: PostgresQuery, columns: [String]) async throws -> [[String: String]] {
        var result: [[String: String]] = []
        for try await row in try await self.client.query(query, logger: self.logger) {
            var object: [String: String] = [:]
            for (name, cell) in zip(columns, row) {
                if let value = try cell.decode(String?.self) { object[name] = value }
            }
            result.append(object)
        }
        return result
    }
}
