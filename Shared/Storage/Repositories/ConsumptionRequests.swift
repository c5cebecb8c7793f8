import AppStoreModels
import EntitlementDecisions
import Entitlements
import Foundation
import JWSVerification
public import Logging
public import PipelineRecords
public import PostgresNIO

/// Consumption requests in PostgreSQL: recorded by the entitlement-updater inside the CONSUMPTION_REQUEST's own
/// transaction (once per transaction, environment and app: Apple's periodic repeats only count), answered
/// through the outbox and refund-resolver, closed by the resolver's outcome, and reported when their 12-hour
/// window closed without an answer.
public enum ConsumptionRequests {
    /// A request's state: `pending` (answer on its way), `sent`, `not-consented` (no consent recorded: Apple wants
    /// no answer), `no-policy` (the operator configured none), `late` (the window had closed before it could be
    /// sent), `missed` (still pending when the window closed), `failed` (Apple refused it or retries ran out),
    /// `not-supported` (an assigned transaction: Apple takes no consumption information for it).
    public static let statuses = [
        "pending", "sent", "not-consented", "no-policy", "late", "missed", "failed", "not-supported",
    ]

    /// Records a CONSUMPTION_REQUEST (within the apply transaction), loads what the decision needs, and writes what
    /// ``ConsumptionDecision`` decides: the request's status and, when an answer goes out, the answer to the outbox.
    /// `now` is epoch ms. Returns the status it was recorded
    /// with, or nil for a repeat of a request already recorded.
    static func record(
        _ entry: NotificationLogEntry, notification: VerifiedNotification, customer: String,
        policy: ConsumptionPolicy?,
        topics: PipelineTopics, now: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> String? {
        guard let transaction = notification.transaction, let transactionId = transaction.transactionId else {
            return nil
        }
        let original = transaction.originalTransactionId ?? entry.subject
        let deadline = ConsumptionDecision.deadline(of: entry)
        let reason = notification.payload.data?.rawConsumptionRequestReason
        // Apple repeats a request while its window is open: a repeat only counts. A request signed after the
        // earlier one's window closed is a new refund request and opens the row again.
        let inserted = try await connection.query(
            """
            INSERT INTO consumption_requests (environment, bundle_id, transaction_id, original_transaction_id, customer, reason, notification_uuid,
                                              requested_at, deadline, status)
            VALUES (\(entry.environment), \(entry.bundleId), \(transactionId), \(original), \(customer), \(reason), \(entry.id), \(entry.signedDate),
                    \(deadline), 'pending')
            ON CONFLICT (environment, bundle_id, transaction_id) DO UPDATE SET
                times_requested = consumption_requests.times_requested + 1, updated_at = now(),
                notification_uuid = CASE WHEN consumption_requests.deadline <= EXCLUDED.requested_at
                                         THEN EXCLUDED.notification_uuid ELSE consumption_requests.notification_uuid END,
                reason = CASE WHEN consumption_requests.deadline <= EXCLUDED.requested_at THEN EXCLUDED.reason ELSE consumption_requests.reason END,
                customer = CASE WHEN consumption_requests.deadline <= EXCLUDED.requested_at THEN EXCLUDED.customer ELSE consumption_requests.customer END,
                requested_at = GREATEST(consumption_requests.requested_at, CASE WHEN consumption_requests.deadline <= EXCLUDED.requested_at
                                         THEN EXCLUDED.requested_at ELSE consumption_requests.requested_at END),
                deadline = CASE WHEN consumption_requests.deadline <= EXCLUDED.requested_at THEN EXCLUDED.deadline ELSE consumption_requests.deadline END,
                status = CASE WHEN consumption_requests.deadline <= EXCLUDED.requested_at THEN 'pending' ELSE consumption_requests.status END,
                attempts = CASE WHEN consumption_requests.deadline <= EXCLUDED.requested_at THEN 0 ELSE consumption_requests.attempts END,
                answered_at = CASE WHEN consumption_requests.deadline <= EXCLUDED.requested_at THEN NULL ELSE consumption_requests.answered_at END
            RETURNING notification_uuid = \(entry.id)
            """, logger: logger)
        var isNew = false
        for try await value in inserted.decode(Bool.self) { isNew = value }
        guard isNew else { return nil }

        var facts = try await Self.facts(
            of: entry, customer: customer, original: original,
            token: CustomerKey.validToken(transaction.appAccountToken),
            transactionId: transactionId, on: connection, logger: logger)
        facts.productType = transaction.rawType
        facts.appAccountToken = transaction.appAccountToken?.lowercased()
        let decision = ConsumptionDecision(
            entry: entry, transaction: transaction, transactionId: transactionId, original: original, facts: facts,
            policy: policy, now: now)
        let status = decision.status, answer = decision.answer, detail = decision.detail
        let encoder = AppStoreJSON.makeCanonicalEncoder()
        let factsJSON = String(decoding: try encoder.encode(facts), as: UTF8.self)
        var answerJSON: String?
        if let body = answer?.v2 { answerJSON = String(decoding: try encoder.encode(body), as: UTF8.self) }
        if let body = answer?.v1 { answerJSON = String(decoding: try encoder.encode(body), as: UTF8.self) }
        try await connection.query(
            """
            UPDATE consumption_requests SET status = \(status), api_version = \(answer?.apiVersion), facts = \(factsJSON)::jsonb,
                answer = \(answerJSON)::jsonb, detail = \(detail), updated_at = now()
            WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId) AND transaction_id = \(transactionId)
            """, logger: logger)
        if status == "late" {
            logger.warning(
                "consumption request arrived after its deadline",
                metadata: ["transactionId": "\(transactionId)", "deadline": "\(deadline)"])
        }
        if let answer {
            let event = OutboxEvent(
                id: answer.requestId, topic: topics.statusRequests, key: answer.key,
                payload: String(decoding: try encoder.encode(answer), as: UTF8.self), environment: answer.environment,
                bundleId: answer.bundleId, traceParent: nil)
            try await OutboxRows.insert(event, on: connection, logger: logger)
        }
        return status
    }

    /// What the database holds about the customer (`customer`, the purchase's customer key) and this purchase: the
    /// team's facts recorded for the purchase's app user (through its binding), its appAccountToken or its
    /// originalTransactionId, each by its own kind; and the customer's purchases' totals.
    static func facts(
        of entry: NotificationLogEntry, customer: String, original: String, token: String?, transactionId: String,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> ConsumptionFacts {
        var facts = ConsumptionFacts()
        let team = try await connection.query(
            """
            SELECT customer_consented, play_time_minutes, delivery_status, consumption_percentage, user_status FROM consumption_facts f
            WHERE f.environment = \(entry.environment) AND f.bundle_id = \(entry.bundleId) AND f.transaction_id IN ('', \(transactionId))
              AND ((f.customer_kind = 'appUserId' AND f.customer = (
                       SELECT app_user_id FROM customer_bindings
                       WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId) AND original_transaction_id = \(original)))
                OR (f.customer_kind = 'appAccountToken' AND f.customer = \(token))
                OR (f.customer_kind = 'originalTransactionId' AND f.customer = \(original)))
            ORDER BY f.transaction_id DESC, f.customer_kind
            """, logger: logger)
        var seen = false
        for try await (consented, playTime, delivery, percentage, userStatus) in team.decode(
            (Bool, Int64?, String?, Int32?, Int32?).self)
        {
            // The transaction's own row first, then the customer's: a field the first leaves empty comes from the second.
            facts.customerConsented = facts.customerConsented ?? consented
            facts.playTimeMinutes = facts.playTimeMinutes ?? playTime
            facts.deliveryStatus = facts.deliveryStatus ?? delivery
            facts.consumptionPercentage = facts.consumptionPercentage ?? percentage
            facts.userStatus = facts.userStatus ?? userStatus
            seen = true
        }
        if !seen { facts.customerConsented = nil }
        let own = try await connection.query(
            """
            SELECT min(t.purchase_date),
                   CASE WHEN bool_and(t.currency = 'USD' OR t.price IS NULL) THEN COALESCE(sum(t.price), 0)::bigint END,
                   CASE WHEN bool_and(t.currency = 'USD' OR t.price IS NULL) THEN COALESCE(sum(t.price) FILTER (WHERE t.revocation_date IS NOT NULL), 0)::bigint END
            FROM transactions t
            WHERE t.environment = \(entry.environment) AND t.bundle_id = \(entry.bundleId) AND t.original_transaction_id IN (
                SELECT original_transaction_id FROM entitlements WHERE environment = \(entry.environment) AND bundle_id = \(entry.bundleId)
                  AND customer = \(customer)
                UNION SELECT original_transaction_id FROM customer_bindings WHERE environment = \(entry.environment)
                  AND bundle_id = \(entry.bundleId) AND app_user_id = \(customer)
                UNION SELECT \(entry.subject))
            """, logger: logger)
        for try await (first, purchased, refunded) in own.decode((Int64?, Int64?, Int64?).self) {
            facts.firstPurchaseAt = first
            facts.lifetimePurchasedUSDMilli = purchased
            facts.lifetimeRefundedUSDMilli = refunded
        }
        return facts
    }

    /// Applies refund-resolver's outcome to a pending request (a repeated outcome changes nothing).
    public static func apply(_ outcome: ConsumptionOutcome, client: PostgresClient, logger: Logger) async throws {
        try await client.query(
            """
            UPDATE consumption_requests SET status = \(outcome.status), attempts = \(outcome.attempts), answered_at = \(outcome.at),
                detail = \(outcome.detail), updated_at = now()
            WHERE environment = \(outcome.environment) AND bundle_id = \(outcome.bundleId) AND transaction_id = \(outcome.transactionId)
              AND notification_uuid = \(outcome.notificationUUID) AND status IN ('pending', 'missed')
            """, logger: logger)
    }

    /// Stores what the app team recorded (the newest record wins).
    public static func store(_ facts: ConsumptionFactsRecord, client: PostgresClient, logger: Logger) async throws {
        try await client.query(
            """
            INSERT INTO consumption_facts (environment, bundle_id, customer_kind, customer, transaction_id, customer_consented, play_time_minutes,
                                           delivery_status, consumption_percentage, user_status)
            VALUES (\(facts.environment), \(facts.bundleId), \(facts.kind), \(facts.customer), \(facts.transactionId), \(facts.customerConsented),
                    \(facts.playTimeMinutes), \(facts.deliveryStatus), \(facts.consumptionPercentage), \(facts.userStatus))
            ON CONFLICT (environment, bundle_id, customer_kind, customer, transaction_id) DO UPDATE SET
                customer_consented = EXCLUDED.customer_consented, play_time_minutes = EXCLUDED.play_time_minutes,
                delivery_status = EXCLUDED.delivery_status, consumption_percentage = EXCLUDED.consumption_percentage,
                user_status = EXCLUDED.user_status, updated_at = now()
            """, logger: logger)
    }

    /// Whether recorded facts equal `facts` (customer-api waits for its write to land).
    public static func isStored(_ facts: ConsumptionFactsRecord, client: PostgresClient, logger: Logger) async throws
        -> Bool
    {
        var stored = false
        for try await _ in try await client.query(
            """
            SELECT 1 FROM consumption_facts WHERE environment = \(facts.environment) AND bundle_id = \(facts.bundleId)
              AND customer_kind = \(facts.kind) AND customer = \(facts.customer) AND transaction_id = \(facts.transactionId) AND customer_consented = \(facts.customerConsented)
              AND play_time_minutes IS NOT DISTINCT FROM \(facts.playTimeMinutes) AND delivery_status IS NOT DISTINCT FROM \(facts.deliveryStatus)
              AND consumption_percentage IS NOT DISTINCT FROM \(facts.consumptionPercentage) AND user_status IS NOT DISTINCT FROM \(facts.userStatus)
            """, logger: logger
        ).decode(Int.self) { stored = true }
        return stored
    }

    /// Marks the requests still pending after their deadline as `missed`; returns how many (for the metric).
    public static func markMissed(now: Int64, client: PostgresClient, logger: Logger) async throws -> Int {
        var count = 0
        let rows = try await client.query(
            """
            UPDATE consumption_requests SET status = 'missed', detail = 'no answer before the 12-hour deadline', updated_at = now()
            WHERE status = 'pending' AND deadline < \(now) RETURNING 1
            """, logger: logger)
        for try await _ in rows.decode(Int.self) { count += 1 }
        return count
    }
}
