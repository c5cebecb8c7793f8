import AppStoreModels
import Logging
import PostgresNIO

/// Writes decoded renewal info, one row per (environment, app, subscription): every verified renewal info
/// is stored, stale or not, and the newest signed version wins.
enum RenewalInfoRows {
    /// Inserts or updates the renewal info unless a newer signed version is already stored; `signedDate` is
    /// used when the renewal info carries none.
    static func upsert(_ r: JWSRenewalInfoDecodedPayload, environment: String, bundleId: String, signedDate: Int64,
                       on connection: PostgresConnection, logger: Logger) async throws {
        guard let original = r.originalTransactionId else { return }
        try await connection.query("""
            INSERT INTO renewal_infos (environment, bundle_id, original_transaction_id, product_id, auto_renew_product_id, auto_renew_status,
                expiration_intent, is_in_billing_retry, grace_period_expires_date, price_increase_status, offer_type, offer_identifier,
                offer_discount_type, renewal_date, renewal_price, currency, recent_subscription_start_date, app_account_token,
                app_transaction_id, signed_date)
            VALUES (\(environment), \(bundleId), \(original), \(r.productId), \(r.autoRenewProductId), \(r.rawAutoRenewStatus),
                \(r.rawExpirationIntent), \(r.isInBillingRetryPeriod), \(r.gracePeriodExpiresDate?.millisecondsSince1970),
                \(r.rawPriceIncreaseStatus), \(r.rawOfferType), \(r.offerIdentifier), \(r.rawOfferDiscountType),
                \(r.renewalDate?.millisecondsSince1970), \(r.renewalPrice), \(r.currency), \(r.recentSubscriptionStartDate?.millisecondsSince1970),
                \(r.appAccountToken), \(r.appTransactionId), \(r.signedDate?.millisecondsSince1970 ?? signedDate))
            ON CONFLICT (environment, bundle_id, original_transaction_id) DO UPDATE SET
                product_id = EXCLUDED.product_id, auto_renew_product_id = EXCLUDED.auto_renew_product_id,
                auto_renew_status = EXCLUDED.auto_renew_status, expiration_intent = EXCLUDED.expiration_intent,
                is_in_billing_retry = EXCLUDED.is_in_billing_retry, grace_period_expires_date = EXCLUDED.grace_period_expires_date,
                price_increase_status = EXCLUDED.price_increase_status, offer_type = EXCLUDED.offer_type,
                offer_identifier = EXCLUDED.offer_identifier, offer_discount_type = EXCLUDED.offer_discount_type,
                renewal_date = EXCLUDED.renewal_date, renewal_price = EXCLUDED.renewal_price, currency = EXCLUDED.currency,
                recent_subscription_start_date = EXCLUDED.recent_subscription_start_date, app_account_token = EXCLUDED.app_account_token,
                app_transaction_id = EXCLUDED.app_transaction_id, signed_date = EXCLUDED.signed_date, updated_at = now()
            WHERE renewal_infos.signed_date <= EXCLUDED.signed_date
            """, logger: logger)
    }
}
