import AppStoreModels
import JWSVerification
import Logging
import PostgresNIO

/// Writes the per-subscription view (auto-renewables only), one row per (environment, app, subscription):
/// status, renewal preferences and dates, as of the newest notification.
enum SubscriptionRows {
    /// Inserts or updates the subscription unless a newer notification already updated it.
    static func upsert(_ notification: VerifiedNotification, environment: String, bundleId: String, customer: String, signedDate: Int64,
                       on connection: PostgresConnection, logger: Logger) async throws {
        guard let t = notification.transaction, t.type == .autoRenewableSubscription, let original = t.originalTransactionId else { return }
        let r = notification.renewalInfo
        try await connection.query("""
            INSERT INTO subscriptions (environment, bundle_id, original_transaction_id, customer, product_id, subscription_group_identifier, status,
                auto_renew_status, auto_renew_product_id, expires_date, grace_period_expires_date, is_in_billing_retry,
                price_increase_status, expiration_intent, last_signed_date)
            VALUES (\(environment), \(bundleId), \(original), \(customer), \(t.productId ?? ""), \(t.subscriptionGroupIdentifier),
                \(notification.payload.data?.rawStatus), \(r?.rawAutoRenewStatus), \(r?.autoRenewProductId), \(t.expiresDate?.millisecondsSince1970),
                \(r?.gracePeriodExpiresDate?.millisecondsSince1970), \(r?.isInBillingRetryPeriod), \(r?.rawPriceIncreaseStatus),
                \(r?.rawExpirationIntent), \(signedDate))
            ON CONFLICT (environment, bundle_id, original_transaction_id) DO UPDATE SET
                customer = EXCLUDED.customer, product_id = EXCLUDED.product_id,
                subscription_group_identifier = EXCLUDED.subscription_group_identifier,
                status = COALESCE(EXCLUDED.status, subscriptions.status),
                auto_renew_status = COALESCE(EXCLUDED.auto_renew_status, subscriptions.auto_renew_status),
                auto_renew_product_id = COALESCE(EXCLUDED.auto_renew_product_id, subscriptions.auto_renew_product_id),
                expires_date = EXCLUDED.expires_date,
                grace_period_expires_date = COALESCE(EXCLUDED.grace_period_expires_date, subscriptions.grace_period_expires_date),
                is_in_billing_retry = COALESCE(EXCLUDED.is_in_billing_retry, subscriptions.is_in_billing_retry),
                price_increase_status = COALESCE(EXCLUDED.price_increase_status, subscriptions.price_increase_status),
                expiration_intent = COALESCE(EXCLUDED.expiration_intent, subscriptions.expiration_intent),
                last_signed_date = EXCLUDED.last_signed_date, updated_at = now()
            WHERE subscriptions.last_signed_date <= EXCLUDED.last_signed_date
            """, logger: logger)
    }
}
