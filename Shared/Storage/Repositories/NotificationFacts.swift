import AppStoreModels
import Entitlements
import Foundation
import JWSVerification
import Logging
import NotificationPipeline
import PostgresNIO

/// Writes everything a verified notification (or status snapshot) states, late or not, in one statement:
/// its outcome in the notification log, its transaction and renewal info (one row per environment, app and
/// id; the newest signed version wins, so its revocation fields stand), the subscription view (the newest
/// notification wins) and its events for the outbox, in order. One statement instead of five keeps the
/// updater's cost per notification where it was before facts were kept for stale notifications.
enum NotificationFacts {
    /// Writes the facts of `notification` as the rules decided in `update`; `customer` owns its subscription view.
    static func write(_ entry: EntitlementRepository.LogEntry, update: EntitlementUpdate, notification: VerifiedNotification, customer: String,
                      topics: PipelineTopics, on connection: PostgresConnection, logger: Logger) async throws {
        let t = notification.transaction
        let r = notification.renewalInfo
        let hasTransaction = t?.transactionId != nil && t?.originalTransactionId != nil
        let isSubscription = hasTransaction && t?.type == .autoRenewableSubscription
        let events = try OutboxRows.Columns(update.events, topics: topics)
        try await connection.query("""
            WITH logged AS (
                UPDATE notification_log SET outcome = \(update.outcome.rawValue), detail = \(update.detail),
                                            advances_subject = \(update.advancesSubject)
                WHERE notification_uuid = \(entry.id)
            ), stored_transaction AS (
                INSERT INTO transactions (environment, bundle_id, transaction_id, original_transaction_id, web_order_line_item_id, product_id,
                    product_type, subscription_group_identifier, app_account_token, ownership_type, purchase_date, original_purchase_date,
                    expires_date, quantity, transaction_reason, is_upgraded, offer_type, offer_identifier, price, currency, storefront,
                    revocation_date, revocation_reason, revocation_type, revocation_percentage, storefront_id, offer_discount_type,
                    offer_period, app_transaction_id, signed_date)
                SELECT \(entry.environment), \(entry.bundleId), \(t?.transactionId), \(t?.originalTransactionId), \(t?.webOrderLineItemId),
                    \(t?.productId ?? ""), \(t?.rawType), \(t?.subscriptionGroupIdentifier), \(t?.appAccountToken), \(t?.rawInAppOwnershipType),
                    \(t?.purchaseDate?.millisecondsSince1970), \(t?.originalPurchaseDate?.millisecondsSince1970),
                    \(t?.expiresDate?.millisecondsSince1970), \(t?.quantity), \(t?.rawTransactionReason), \(t?.isUpgraded ?? false),
                    \(t?.rawOfferType), \(t?.offerIdentifier), \(t?.price), \(t?.currency), \(t?.storefront),
                    \(t?.revocationDate?.millisecondsSince1970), \(t?.rawRevocationReason), \(t?.rawRevocationType), \(t?.revocationPercentage),
                    \(t?.storefrontId), \(t?.rawOfferDiscountType), \(t?.offerPeriod), \(t?.appTransactionId),
                    \(t?.signedDate?.millisecondsSince1970 ?? entry.signedDate)
                WHERE \(hasTransaction)
                ON CONFLICT (environment, bundle_id, transaction_id) DO UPDATE SET
                    expires_date = EXCLUDED.expires_date, is_upgraded = EXCLUDED.is_upgraded, app_account_token = EXCLUDED.app_account_token,
                    ownership_type = EXCLUDED.ownership_type, revocation_date = EXCLUDED.revocation_date,
                    revocation_reason = EXCLUDED.revocation_reason, revocation_type = EXCLUDED.revocation_type,
                    revocation_percentage = EXCLUDED.revocation_percentage, signed_date = EXCLUDED.signed_date, updated_at = now()
                WHERE transactions.signed_date <= EXCLUDED.signed_date
            ), stored_renewal AS (
                INSERT INTO renewal_infos (environment, bundle_id, original_transaction_id, product_id, auto_renew_product_id, auto_renew_status,
                    expiration_intent, is_in_billing_retry, grace_period_expires_date, price_increase_status, offer_type, offer_identifier,
                    offer_discount_type, renewal_date, renewal_price, currency, recent_subscription_start_date, app_account_token,
                    app_transaction_id, signed_date)
                SELECT \(entry.environment), \(entry.bundleId), \(r?.originalTransactionId), \(r?.productId), \(r?.autoRenewProductId),
                    \(r?.rawAutoRenewStatus), \(r?.rawExpirationIntent), \(r?.isInBillingRetryPeriod),
                    \(r?.gracePeriodExpiresDate?.millisecondsSince1970), \(r?.rawPriceIncreaseStatus), \(r?.rawOfferType), \(r?.offerIdentifier),
                    \(r?.rawOfferDiscountType), \(r?.renewalDate?.millisecondsSince1970), \(r?.renewalPrice), \(r?.currency),
                    \(r?.recentSubscriptionStartDate?.millisecondsSince1970), \(r?.appAccountToken), \(r?.appTransactionId),
                    \(r?.signedDate?.millisecondsSince1970 ?? entry.signedDate)
                WHERE \(r?.originalTransactionId != nil)
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
            ), stored_subscription AS (
                INSERT INTO subscriptions (environment, bundle_id, original_transaction_id, customer, product_id, subscription_group_identifier,
                    status, auto_renew_status, auto_renew_product_id, expires_date, grace_period_expires_date, is_in_billing_retry,
                    price_increase_status, expiration_intent, last_signed_date)
                SELECT \(entry.environment), \(entry.bundleId), \(t?.originalTransactionId), \(customer), \(t?.productId ?? ""),
                    \(t?.subscriptionGroupIdentifier), \(notification.payload.data?.rawStatus), \(r?.rawAutoRenewStatus), \(r?.autoRenewProductId),
                    \(t?.expiresDate?.millisecondsSince1970), \(r?.gracePeriodExpiresDate?.millisecondsSince1970), \(r?.isInBillingRetryPeriod),
                    \(r?.rawPriceIncreaseStatus), \(r?.rawExpirationIntent), \(entry.signedDate)
                WHERE \(isSubscription)
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
            )
            INSERT INTO outbox (event_id, topic, key, payload, environment, bundle_id)
            SELECT id, topic, key, payload::jsonb, environment, bundle_id
            FROM unnest(\(events.ids)::text[], \(events.topics)::text[], \(events.keys)::text[], \(events.payloads)::text[],
                        \(events.environments)::text[], \(events.bundleIds)::text[])
                 WITH ORDINALITY AS e(id, topic, key, payload, environment, bundle_id, position)
            ORDER BY position
            ON CONFLICT (event_id) DO NOTHING
            """, logger: logger)
    }
}
