import AppStoreModels
import Logging
import PostgresNIO

/// Writes decoded transactions, one row per (environment, app, transaction id): every verified transaction
/// is stored, stale or not, and the newest signed version of each wins (so its revocation fields stand).
enum TransactionRows {
    /// Inserts or updates a transaction unless a newer signed version is already stored.
    static func upsert(_ t: JWSTransactionDecodedPayload, environment: String, bundleId: String, signedDate: Int64,
                       on connection: PostgresConnection, logger: Logger) async throws {
        guard let id = t.transactionId, let original = t.originalTransactionId else { return }
        let transactionSigned = t.signedDate?.millisecondsSince1970 ?? signedDate
        try await connection.query("""
            INSERT INTO transactions (environment, bundle_id, transaction_id, original_transaction_id, web_order_line_item_id, product_id,
                product_type, subscription_group_identifier, app_account_token, ownership_type, purchase_date, original_purchase_date,
                expires_date, quantity, transaction_reason, is_upgraded, offer_type, offer_identifier, price, currency, storefront,
                revocation_date, revocation_reason, revocation_type, revocation_percentage, storefront_id, offer_discount_type,
                offer_period, app_transaction_id, signed_date)
            VALUES (\(environment), \(bundleId), \(id), \(original), \(t.webOrderLineItemId), \(t.productId ?? ""), \(t.rawType),
                \(t.subscriptionGroupIdentifier), \(t.appAccountToken), \(t.rawInAppOwnershipType),
                \(t.purchaseDate?.millisecondsSince1970), \(t.originalPurchaseDate?.millisecondsSince1970), \(t.expiresDate?.millisecondsSince1970),
                \(t.quantity), \(t.rawTransactionReason), \(t.isUpgraded ?? false), \(t.rawOfferType), \(t.offerIdentifier), \(t.price),
                \(t.currency), \(t.storefront), \(t.revocationDate?.millisecondsSince1970), \(t.rawRevocationReason), \(t.rawRevocationType),
                \(t.revocationPercentage), \(t.storefrontId), \(t.rawOfferDiscountType), \(t.offerPeriod), \(t.appTransactionId),
                \(transactionSigned))
            ON CONFLICT (environment, bundle_id, transaction_id) DO UPDATE SET
                expires_date = EXCLUDED.expires_date, is_upgraded = EXCLUDED.is_upgraded, app_account_token = EXCLUDED.app_account_token,
                ownership_type = EXCLUDED.ownership_type, revocation_date = EXCLUDED.revocation_date,
                revocation_reason = EXCLUDED.revocation_reason, revocation_type = EXCLUDED.revocation_type,
                revocation_percentage = EXCLUDED.revocation_percentage, signed_date = EXCLUDED.signed_date, updated_at = now()
            WHERE transactions.signed_date <= EXCLUDED.signed_date
            """, logger: logger)
    }
}
