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
/// an event id from being written twice; were one (`ON CONFLICT … DO NOTHING`), its number would be a gap. The facts
/// travel as one JSON array that PostgreSQL expands with `json_to_recordset`, the events as one binary `text[]` per
/// column (``OutboxColumns``: a payload is neither escaped into a JSON string nor lexed and unescaped out of one), so
/// one prepared statement (``WriteStatement``) serves every wave, whatever its size.
enum NotificationFacts {
    /// Writes the facts of every row (their events in row order).
    static func write(_ rows: [WavePlan.FactsRow], on connection: PostgresConnection, logger: Logger) async throws {
        guard !rows.isEmpty else { return }
        let statement = WriteStatement(facts: try Self.factsRecordset(rows), outbox: try OutboxColumns(rows))
        try await connection.execute(statement, logger: logger)
    }

    /// The statement's first parameter: the rows' facts as a JSON array, written member by member.
    static func factsRecordset(_ rows: [WavePlan.FactsRow]) throws -> String {
        var facts = JSONMemberWriter(capacity: rows.count * 1_536)
        try facts.arrayOfObjects(rows) { w, row in try Self.write(row, to: &w) }
        return String(decoding: facts.bytes, as: UTF8.self)
    }

    // MARK: The statement

    /// The wave's one statement, prepared once per connection: PostgreSQL parses it once and, after its first
    /// executions, keeps one plan for it (the rows are its two parameters, whatever the wave's size).
    struct WriteStatement: PostgresPreparedStatement {
        typealias Row = ()
        /// The facts as a JSON array of objects (``write(_:to:)``).
        var facts: String
        /// The outbox events, one array per column.
        var outbox: OutboxColumns

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1 + OutboxColumns.names.count)
            bindings.append(self.facts)
            self.outbox.append(to: &bindings)
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
                SELECT position, id, topic, key, payload_tail, environment, bundle_id,
                    NULLIF(trace_parent, '') AS trace_parent, NULLIF(subject, '') AS subject
                FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
                    WITH ORDINALITY AS e(id, topic, key, payload_tail, environment, bundle_id, trace_parent, subject, position)
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
                SELECT *, ('{' || CASE WHEN sequence IS NULL THEN '' ELSE '"sequence":' || sequence || ',' END
                           || payload_tail)::json AS sequenced_payload
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

    /// One input's facts, a row of the first recordset (its keys are the recordset's column names; nil is left out,
    /// which reads as NULL): log outcome, transaction, renewal info, subscription view, entitlement.
    /// `FactsStatementTests` checks that a fully populated row writes every column of the recordset.
    static func write(_ row: WavePlan.FactsRow, to w: inout JSONMemberWriter) throws {
        let entry = row.entry, t = row.notification.transaction, r = row.notification.renewalInfo,
            e = row.entitlement
        let hasTransaction = t?.transactionId != nil && t?.originalTransactionId != nil
        w.string("id", entry.id)
        w.string("type", entry.type)
        w.string("subtype", entry.subtype)
        w.string("subject", entry.subject)
        w.integer("received_at", entry.receivedAt)
        w.string("outcome", row.update.outcome.rawValue)
        w.string("detail", row.update.detail)
        w.bool("advances", row.update.advancesSubject)
        w.string("environment", entry.environment)
        w.string("bundle_id", entry.bundleId)
        w.integer("signed_date", entry.signedDate)
        w.bool("has_transaction", hasTransaction)
        w.string("transaction_id", t?.transactionId)
        w.string("original_transaction_id", t?.originalTransactionId)
        w.string("web_order_line_item_id", t?.webOrderLineItemId)
        w.string("product_id", t?.productId ?? "")
        w.string("product_type", t?.rawType)
        w.string("subscription_group_identifier", t?.subscriptionGroupIdentifier)
        w.string("app_account_token", t?.appAccountToken)
        w.string("ownership_type", t?.rawInAppOwnershipType)
        w.integer("purchase_date", t?.purchaseDate?.millisecondsSince1970)
        w.integer("original_purchase_date", t?.originalPurchaseDate?.millisecondsSince1970)
        w.integer("expires_date", t?.expiresDate?.millisecondsSince1970)
        w.integer("quantity", t?.quantity)
        w.string("transaction_reason", t?.rawTransactionReason)
        w.bool("is_upgraded", t?.isUpgraded ?? false)
        w.integer("offer_type", t?.rawOfferType)
        w.string("offer_identifier", t?.offerIdentifier)
        w.integer("price", t?.price)
        w.string("currency", t?.currency)
        w.string("storefront", t?.storefront)
        w.integer("revocation_date", t?.revocationDate?.millisecondsSince1970)
        w.integer("revocation_reason", t?.rawRevocationReason)
        w.string("revocation_type", t?.rawRevocationType)
        w.integer("revocation_percentage", t?.revocationPercentage)
        w.string("storefront_id", t?.storefrontId)
        w.string("offer_discount_type", t?.rawOfferDiscountType)
        w.string("offer_period", t?.offerPeriod)
        w.string("app_transaction_id", t?.appTransactionId)
        w.integer("transaction_signed_date", t?.signedDate?.millisecondsSince1970 ?? entry.signedDate)
        w.bool("has_renewal", r?.originalTransactionId != nil)
        w.string("r_original_transaction_id", r?.originalTransactionId)
        w.string("r_product_id", r?.productId)
        w.string("r_auto_renew_product_id", r?.autoRenewProductId)
        w.integer("r_auto_renew_status", r?.rawAutoRenewStatus)
        w.integer("r_expiration_intent", r?.rawExpirationIntent)
        w.bool("r_is_in_billing_retry", r?.isInBillingRetryPeriod)
        w.integer("r_grace_period_expires_date", r?.gracePeriodExpiresDate?.millisecondsSince1970)
        w.integer("r_price_increase_status", r?.rawPriceIncreaseStatus)
        w.integer("r_offer_type", r?.rawOfferType)
        w.string("r_offer_identifier", r?.offerIdentifier)
        w.string("r_offer_discount_type", r?.rawOfferDiscountType)
        w.integer("r_renewal_date", r?.renewalDate?.millisecondsSince1970)
        w.integer("r_renewal_price", r?.renewalPrice)
        w.string("r_currency", r?.currency)
        w.integer("r_recent_subscription_start_date", r?.recentSubscriptionStartDate?.millisecondsSince1970)
        w.string("r_app_account_token", r?.appAccountToken)
        w.string("r_app_transaction_id", r?.appTransactionId)
        w.integer("r_signed_date", r?.signedDate?.millisecondsSince1970 ?? entry.signedDate)
        try w.encoded("r_eligible_win_back_offer_ids", r?.eligibleWinBackOfferIds)
        w.bool("is_subscription", hasTransaction && t?.type == .autoRenewableSubscription)
        w.string("customer", row.customer)
        w.integer("status", row.notification.payload.data?.rawStatus)
        w.bool("has_entitlement", e != nil)
        w.string("e_customer", e?.customer)
        w.string("e_product_id", e?.productId)
        w.string("e_entitlement_id", e.map { $0.entitlementId ?? $0.productId })
        w.bool("e_active", e?.active)
        w.string("e_original_transaction_id", e?.originalTransactionId)
        w.string("e_source_transaction_id", e?.sourceTransactionId)
        w.string("e_ownership_type", e?.ownershipType)
        w.integer("e_valid_from", e?.validFrom)
        w.integer("e_valid_until", e?.validUntil)
        w.integer("e_revoked_at", e?.revokedAt)
        w.integer("e_revocation_reason", e?.revocationReason)
        w.string("e_revocation_type", e?.revocationType)
    }
}
