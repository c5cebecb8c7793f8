import AppStoreModels
import EntitlementDecisions
import Entitlements
import Foundation
import Logging
import PostgresNIO

/// Writes everything the notifications of one wave state (a wave holds at most one input per subject), late
/// or not, in one statement: each one's outcome in the notification log, its transaction and renewal info
/// (one row per environment, app and id; the newest signed version wins, so its revocation fields stand), the
/// subscription view (the newest notification wins), the entitlement it leaves (when given) and its events for
/// the outbox, in order, each numbered among its subject's events (`event_sequences`: the subject's last number, and
/// `sequence` spliced into the event's JSON as its first field). Applying each notification once (the log) keeps
/// an event id from being written twice; were one (`ON CONFLICT … DO NOTHING`), its number would be a gap. The rows travel as two JSON arrays that PostgreSQL expands with `json_to_recordset`,
/// so one prepared statement (``WriteStatement``) serves every wave, whatever its size.
enum NotificationFacts {
    /// Writes the facts of every row (their events in row order).
    static func write(_ rows: [WavePlan.FactsRow], on connection: PostgresConnection, logger: Logger) async throws {
        guard !rows.isEmpty else { return }
        var records: [FactsRecord] = []
        var events: [EventRecord] = []
        records.reserveCapacity(rows.count)
        for row in rows {
            records.append(FactsRecord(row))
            for event in row.events {
                events.append(
                    EventRecord(
                        position: events.count, id: event.id, topic: event.topic, key: event.key,
                        payload: event.payload, environment: event.environment, bundle_id: event.bundleId,
                        trace_parent: event.traceParent, subject: event.subject))
            }
        }
        let encoder = FastJSONEncoder()
        let facts = String(decoding: try encoder.encode(records), as: UTF8.self)
        let outbox = String(decoding: try encoder.encode(events), as: UTF8.self)
        try await connection.execute(WriteStatement(facts: facts, outbox: outbox), logger: logger)
    }

    // MARK: The statement

    /// The wave's one statement, prepared once per connection: PostgreSQL parses it once and, after its first
    /// executions, keeps one plan for it (the rows are its two parameters, whatever the wave's size).
    struct WriteStatement: PostgresPreparedStatement {
        typealias Row = ()
        /// The facts as a JSON array of ``FactsRecord``.
        var facts: String
        /// The outbox events as a JSON array of ``EventRecord``.
        var outbox: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(self.facts)
            bindings.append(self.outbox)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}

        static let sql = """
            WITH input AS (
                SELECT * FROM json_to_recordset($1::json) AS i(
                    id text, type text, subtype text, subject text, received_at bigint,
                    outcome text, detail text, advances boolean, environment text, bundle_id text, signed_date bigint,
                    has_transaction boolean, transaction_id text, original_transaction_id text, web_order_line_item_id text,
                    product_id text, product_type text, subscription_group_identifier text, app_account_token text, ownership_type text,
                    purchase_date bigint, original_purchase_date bigint, expires_date bigint, quantity integer, transaction_reason text,
                    is_upgraded boolean, offer_type integer, offer_identifier text, price bigint, currency text, storefront text,
                    revocation_date bigint, revocation_reason integer, revocation_type text, revocation_percentage integer,
                    storefront_id text, offer_discount_type text, offer_period text, app_transaction_id text, transaction_signed_date bigint,
                    has_renewal boolean, r_original_transaction_id text, r_product_id text, r_auto_renew_product_id text,
                    r_auto_renew_status integer, r_expiration_intent integer, r_is_in_billing_retry boolean,
                    r_grace_period_expires_date bigint, r_price_increase_status integer, r_offer_type integer, r_offer_identifier text,
                    r_offer_discount_type text, r_renewal_date bigint, r_renewal_price bigint, r_currency text,
                    r_recent_subscription_start_date bigint, r_app_account_token text, r_app_transaction_id text, r_signed_date bigint,
                    r_eligible_win_back_offer_ids jsonb,
                    is_subscription boolean, customer text, status integer,
                    has_entitlement boolean, e_customer text, e_product_id text, e_entitlement_id text, e_active boolean,
                    e_original_transaction_id text, e_source_transaction_id text, e_ownership_type text, e_valid_from bigint,
                    e_valid_until bigint, e_revoked_at bigint, e_revocation_reason integer, e_revocation_type text)
            ), logged AS (
                INSERT INTO notification_log (notification_uuid, notification_type, subtype, subject, environment, bundle_id,
                                              signed_date, received_at, outcome, detail, advances_subject)
                SELECT id, type, subtype, subject, environment, bundle_id, signed_date, received_at, outcome, detail, advances
                FROM input
                ON CONFLICT (notification_uuid) DO UPDATE SET
                    outcome = EXCLUDED.outcome, detail = EXCLUDED.detail, advances_subject = EXCLUDED.advances_subject
            ), stored_transaction AS (
                INSERT INTO transactions (environment, bundle_id, transaction_id, original_transaction_id, web_order_line_item_id, product_id,
                    product_type, subscription_group_identifier, app_account_token, ownership_type, purchase_date, original_purchase_date,
                    expires_date, quantity, transaction_reason, is_upgraded, offer_type, offer_identifier, price, currency, storefront,
                    revocation_date, revocation_reason, revocation_type, revocation_percentage, storefront_id, offer_discount_type,
                    offer_period, app_transaction_id, signed_date)
                SELECT environment, bundle_id, transaction_id, original_transaction_id, web_order_line_item_id, product_id,
                    product_type, subscription_group_identifier, app_account_token, ownership_type, purchase_date, original_purchase_date,
                    expires_date, quantity, transaction_reason, is_upgraded, offer_type, offer_identifier, price, currency, storefront,
                    revocation_date, revocation_reason, revocation_type, revocation_percentage, storefront_id, offer_discount_type,
                    offer_period, app_transaction_id, transaction_signed_date
                FROM input WHERE has_transaction
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
                    app_transaction_id, signed_date, eligible_win_back_offer_ids)
                SELECT environment, bundle_id, r_original_transaction_id, r_product_id, r_auto_renew_product_id, r_auto_renew_status,
                    r_expiration_intent, r_is_in_billing_retry, r_grace_period_expires_date, r_price_increase_status, r_offer_type,
                    r_offer_identifier, r_offer_discount_type, r_renewal_date, r_renewal_price, r_currency, r_recent_subscription_start_date,
                    r_app_account_token, r_app_transaction_id, r_signed_date, r_eligible_win_back_offer_ids
                FROM input WHERE has_renewal
                ON CONFLICT (environment, bundle_id, original_transaction_id) DO UPDATE SET
                    product_id = EXCLUDED.product_id, auto_renew_product_id = EXCLUDED.auto_renew_product_id,
                    auto_renew_status = EXCLUDED.auto_renew_status, expiration_intent = EXCLUDED.expiration_intent,
                    is_in_billing_retry = EXCLUDED.is_in_billing_retry, grace_period_expires_date = EXCLUDED.grace_period_expires_date,
                    price_increase_status = EXCLUDED.price_increase_status, offer_type = EXCLUDED.offer_type,
                    offer_identifier = EXCLUDED.offer_identifier, offer_discount_type = EXCLUDED.offer_discount_type,
                    renewal_date = EXCLUDED.renewal_date, renewal_price = EXCLUDED.renewal_price, currency = EXCLUDED.currency,
                    recent_subscription_start_date = EXCLUDED.recent_subscription_start_date, app_account_token = EXCLUDED.app_account_token,
                    app_transaction_id = EXCLUDED.app_transaction_id, signed_date = EXCLUDED.signed_date,
                    eligible_win_back_offer_ids = EXCLUDED.eligible_win_back_offer_ids, updated_at = now()
                WHERE renewal_infos.signed_date <= EXCLUDED.signed_date
            ), stored_subscription AS (
                INSERT INTO subscriptions (environment, bundle_id, original_transaction_id, customer, product_id, subscription_group_identifier,
                    status, auto_renew_status, auto_renew_product_id, expires_date, grace_period_expires_date, is_in_billing_retry,
                    price_increase_status, expiration_intent, last_signed_date)
                SELECT environment, bundle_id, original_transaction_id, customer, product_id, subscription_group_identifier,
                    status, r_auto_renew_status, r_auto_renew_product_id, expires_date, r_grace_period_expires_date, r_is_in_billing_retry,
                    r_price_increase_status, r_expiration_intent, signed_date
                FROM input WHERE is_subscription
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
            ), stored_entitlement AS (
                INSERT INTO entitlements (environment, bundle_id, customer, product_id, entitlement_id, active, original_transaction_id,
                                          source_transaction_id, ownership_type, valid_from, valid_until, revoked_at, revocation_reason,
                                          revocation_type, last_signed_date, updated_at)
                SELECT environment, bundle_id, e_customer, e_product_id, e_entitlement_id, e_active, e_original_transaction_id,
                    e_source_transaction_id, e_ownership_type, e_valid_from, e_valid_until, e_revoked_at, e_revocation_reason,
                    e_revocation_type, signed_date, clock_timestamp()
                FROM input WHERE has_entitlement
                ON CONFLICT (environment, bundle_id, customer, product_id) DO UPDATE SET \(SubjectRows.entitlementUpdate)
            ), events AS (
                SELECT * FROM json_to_recordset($2::json) AS e(position integer, id text, topic text, key text, payload text,
                                                               environment text, bundle_id text, trace_parent text, subject text)
            ), counts AS (
                SELECT environment, bundle_id, subject, count(*) AS n FROM events WHERE subject IS NOT NULL
                GROUP BY environment, bundle_id, subject
            ), numbered AS (
                INSERT INTO event_sequences (environment, bundle_id, subject, last_sequence)
                SELECT environment, bundle_id, subject, n FROM counts
                ON CONFLICT (environment, bundle_id, subject)
                DO UPDATE SET last_sequence = event_sequences.last_sequence + EXCLUDED.last_sequence
                RETURNING environment, bundle_id, subject, last_sequence
            ), sequenced AS (
                SELECT e.*, x.last_sequence - c.n
                    + row_number() OVER (PARTITION BY e.environment, e.bundle_id, e.subject ORDER BY e.position) AS sequence
                FROM events e
                LEFT JOIN counts c ON (c.environment, c.bundle_id, c.subject) = (e.environment, e.bundle_id, e.subject)
                LEFT JOIN numbered x ON (x.environment, x.bundle_id, x.subject) = (e.environment, e.bundle_id, e.subject)
            ), sequenced_events AS (
                SELECT *, (CASE WHEN sequence IS NULL THEN payload
                                ELSE '{"sequence":' || sequence || ',' || substr(payload, 2) END)::json AS sequenced_payload
                FROM sequenced
            )
            INSERT INTO outbox (event_id, topic, key, payload, environment, bundle_id, trace_parent, sequence)
            SELECT id, topic, key, sequenced_payload, environment, bundle_id, trace_parent, sequence
            FROM sequenced_events
            ORDER BY position
            ON CONFLICT (event_id) DO NOTHING
            """
    }

    // MARK: Rows as PostgreSQL reads them

    /// One outbox row (property names are the recordset's column names).
    struct EventRecord: Encodable {
        var position: Int
        var id: String
        var topic: String
        var key: String
        var payload: String
        var environment: String
        var bundle_id: String
        /// nil is left out, which reads as NULL.
        var trace_parent: String?
        /// The subject whose events are numbered (nil: not numbered).
        var subject: String?
    }

    /// One input's facts (property names are the recordset's column names; nil is left out, which reads as NULL).
    struct FactsRecord: Encodable {
        var id: String, type: String, subtype: String?, subject: String, received_at: Int64?
        var outcome: String, detail: String?, advances: Bool, environment: String, bundle_id: String,
            signed_date: Int64
        var has_transaction: Bool, transaction_id: String?, original_transaction_id: String?,
            web_order_line_item_id: String?
        var product_id: String, product_type: String?, subscription_group_identifier: String?,
            app_account_token: String?
        var ownership_type: String?, purchase_date: Int64?, original_purchase_date: Int64?, expires_date: Int64?,
            quantity: Int32?
        var transaction_reason: String?, is_upgraded: Bool, offer_type: Int32?, offer_identifier: String?, price: Int64?
        var currency: String?, storefront: String?, revocation_date: Int64?, revocation_reason: Int32?,
            revocation_type: String?
        var revocation_percentage: Int32?, storefront_id: String?, offer_discount_type: String?, offer_period: String?
        var app_transaction_id: String?, transaction_signed_date: Int64
        var has_renewal: Bool, r_original_transaction_id: String?, r_product_id: String?,
            r_auto_renew_product_id: String?
        var r_auto_renew_status: Int32?, r_expiration_intent: Int32?, r_is_in_billing_retry: Bool?,
            r_grace_period_expires_date: Int64?
        var r_price_increase_status: Int32?, r_offer_type: Int32?, r_offer_identifier: String?,
            r_offer_discount_type: String?
        var r_renewal_date: Int64?, r_renewal_price: Int64?, r_currency: String?,
            r_recent_subscription_start_date: Int64?
        var r_app_account_token: String?, r_app_transaction_id: String?, r_signed_date: Int64
        var r_eligible_win_back_offer_ids: [String]?
        var is_subscription: Bool, customer: String, status: Int32?
        var has_entitlement: Bool, e_customer: String?, e_product_id: String?, e_entitlement_id: String?,
            e_active: Bool?
        var e_original_transaction_id: String?, e_source_transaction_id: String?, e_ownership_type: String?,
            e_valid_from: Int64?
        var e_valid_until: Int64?, e_revoked_at: Int64?, e_revocation_reason: Int32?, e_revocation_type: String?

        /// The facts of one row: log outcome, transaction, renewal info, subscription view, entitlement.
        init(_ row: WavePlan.FactsRow) {
            let entry = row.entry, t = row.notification.transaction, r = row.notification.renewalInfo,
                e = row.entitlement
            let hasTransaction = t?.transactionId != nil && t?.originalTransactionId != nil
            self.id = entry.id
            self.type = entry.type
            self.subtype = entry.subtype
            self.subject = entry.subject
            self.received_at = entry.receivedAt
            self.outcome = row.update.outcome.rawValue
            self.detail = row.update.detail
            self.advances = row.update.advancesSubject
            self.environment = entry.environment
            self.bundle_id = entry.bundleId
            self.signed_date = entry.signedDate
            self.has_transaction = hasTransaction
            self.transaction_id = t?.transactionId
            self.original_transaction_id = t?.originalTransactionId
            self.web_order_line_item_id = t?.webOrderLineItemId
            self.product_id = t?.productId ?? ""
            self.product_type = t?.rawType
            self.subscription_group_identifier = t?.subscriptionGroupIdentifier
            self.app_account_token = t?.appAccountToken
            self.ownership_type = t?.rawInAppOwnershipType
            self.purchase_date = t?.purchaseDate?.millisecondsSince1970
            self.original_purchase_date = t?.originalPurchaseDate?.millisecondsSince1970
            self.expires_date = t?.expiresDate?.millisecondsSince1970
            self.quantity = t?.quantity
            self.transaction_reason = t?.rawTransactionReason
            self.is_upgraded = t?.isUpgraded ?? false
            self.offer_type = t?.rawOfferType
            self.offer_identifier = t?.offerIdentifier
            self.price = t?.price
            self.currency = t?.currency
            self.storefront = t?.storefront
            self.revocation_date = t?.revocationDate?.millisecondsSince1970
            self.revocation_reason = t?.rawRevocationReason
            self.revocation_type = t?.rawRevocationType
            self.revocation_percentage = t?.revocationPercentage
            self.storefront_id = t?.storefrontId
            self.offer_discount_type = t?.rawOfferDiscountType
            self.offer_period = t?.offerPeriod
            self.app_transaction_id = t?.appTransactionId
            self.transaction_signed_date = t?.signedDate?.millisecondsSince1970 ?? entry.signedDate
            self.has_renewal = r?.originalTransactionId != nil
            self.r_original_transaction_id = r?.originalTransactionId
            self.r_product_id = r?.productId
            self.r_auto_renew_product_id = r?.autoRenewProductId
            self.r_auto_renew_status = r?.rawAutoRenewStatus
            self.r_expiration_intent = r?.rawExpirationIntent
            self.r_is_in_billing_retry = r?.isInBillingRetryPeriod
            self.r_grace_period_expires_date = r?.gracePeriodExpiresDate?.millisecondsSince1970
            self.r_price_increase_status = r?.rawPriceIncreaseStatus
            self.r_offer_type = r?.rawOfferType
            self.r_offer_identifier = r?.offerIdentifier
            self.r_offer_discount_type = r?.rawOfferDiscountType
            self.r_renewal_date = r?.renewalDate?.millisecondsSince1970
            self.r_renewal_price = r?.renewalPrice
            self.r_currency = r?.currency
            self.r_recent_subscription_start_date = r?.recentSubscriptionStartDate?.millisecondsSince1970
            self.r_app_account_token = r?.appAccountToken
            self.r_app_transaction_id = r?.appTransactionId
            self.r_signed_date = r?.signedDate?.millisecondsSince1970 ?? entry.signedDate
            self.r_eligible_win_back_offer_ids = r?.eligibleWinBackOfferIds
            self.is_subscription = hasTransaction && t?.type == .autoRenewableSubscription
            self.customer = row.customer
            self.status = row.notification.payload.data?.rawStatus
            self.has_entitlement = e != nil
            self.e_customer = e?.customer
            self.e_product_id = e?.productId
            self.e_entitlement_id = e.map { $0.entitlementId ?? $0.productId }
            self.e_active = e?.active
            self.e_original_transaction_id = e?.originalTransactionId
            self.e_source_transaction_id = e?.sourceTransactionId
            self.e_ownership_type = e?.ownershipType
            self.e_valid_from = e?.validFrom
            self.e_valid_until = e?.validUntil
            self.e_revoked_at = e?.revokedAt
            self.e_revocation_reason = e?.revocationReason
            self.e_revocation_type = e?.revocationType
        }
    }
}
