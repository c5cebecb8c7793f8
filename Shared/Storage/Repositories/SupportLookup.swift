import Entitlements
import Foundation
public import Logging
public import PostgresNIO

/// What a support agent sees of one customer, read from PostgreSQL (read-only): who the search names, the
/// timeline of everything applied to their purchases with its outcome, their consumption requests.
public struct SupportLookup: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// One entry of the notification log about the customer's purchases.
    public struct TimelineEntry: Codable, Hashable, Sendable {
        public var notificationUUID: String
        public var type: String
        public var subtype: String?
        public var environment: String
        public var subject: String
        public var signedDate: Int64
        public var receivedAt: Int64?
        public var appliedAt: Date
        /// `applied`, `stale`, `awaiting-status`, `conflict`, … as the updater logged it.
        public var outcome: String
        public var detail: String?
        /// How many more times it was delivered (each a duplicate that changed nothing).
        public var duplicates: Int
    }

    /// One consumption request as the console shows it.
    public struct ConsumptionRequestRow: Codable, Hashable, Sendable {
        public var environment: String
        public var transactionId: String
        public var originalTransactionId: String
        public var reason: String?
        public var requestedAt: Int64
        public var deadline: Int64
        public var timesRequested: Int
        public var status: String
        public var attempts: Int
        public var answeredAt: Int64?
        public var detail: String?
        /// The answer's JSON body, when one was computed.
        public var answer: String?
    }

    /// The customer a search names, with the kind of its id: the customer a transaction id or original
    /// transaction id belongs to (its bound app user, else its entitlement's or subscription's customer, an
    /// appAccountToken or the original transaction id itself); else the search itself, as an appAccountToken
    /// when it is a UUID and as an app user id otherwise. (The environments are listed so the transaction id is
    /// found through the primary key, whose first column is the environment: without them the scale benchmark
    /// measured 328 ms at 10 million transactions, a scan.)
    public func customer(for query: String, bundleId: String) async throws -> (customer: String, kind: CustomerIDKind) {
        let rows = try await self.client.query(Self.customerQuery(query, bundleId: bundleId), logger: self.logger)
        for try await (bound, customer, original) in rows.decode((String?, String, String).self) {
            if let bound { return (bound, .appUserId) }
            if let token = CustomerKey.validToken(customer), token == customer { return (token, .appAccountToken) }
            return (original, .originalTransactionId)
        }
        if let token = CustomerKey.validToken(query) { return (token, .appAccountToken) }
        return (query, .appUserId)
    }

    /// The notification log about `subjects` in this app, newest first.
    public func timeline(bundleId: String, subjects: [String], limit: Int = 200) async throws -> [TimelineEntry] {
        var entries: [TimelineEntry] = []
        let rows = try await self.client.query(
            """
            SELECT notification_uuid, notification_type, subtype, environment, subject, signed_date, received_at, applied_at, outcome, detail,
                   duplicates
            FROM notification_log
            WHERE environment = ANY(ARRAY['Production', 'Sandbox', 'Xcode', 'LocalTesting']) AND bundle_id = \(bundleId) AND subject = ANY(\(subjects))
            ORDER BY signed_date DESC, applied_at DESC LIMIT \(limit)
            """, logger: self.logger)
        for try await row in rows.decode(
            (String, String, String?, String, String, Int64, Int64?, Date, String, String?, Int32).self)
        {
            entries.append(
                TimelineEntry(
                    notificationUUID: row.0, type: row.1, subtype: row.2, environment: row.3, subject: row.4,
                    signedDate: row.5,
                    receivedAt: row.6, appliedAt: row.7, outcome: row.8, detail: row.9, duplicates: Int(row.10)))
        }
        return entries
    }

    /// The consumption requests about the customer or `subjects`, newest first.
    public func consumptionRequests(bundleId: String, customer: String, subjects: [String]) async throws
        -> [ConsumptionRequestRow]
    {
        var result: [ConsumptionRequestRow] = []
        let rows = try await self.client.query(
            Self.consumptionQuery(bundleId: bundleId, customer: customer, subjects: subjects), logger: self.logger)
        for try await row in rows.decode(
            (String, String, String, String?, Int64, Int64, Int32, String, Int32, Int64?, String?, String?).self)
        {
            result.append(
                ConsumptionRequestRow(
                    environment: row.0, transactionId: row.1, originalTransactionId: row.2, reason: row.3,
                    requestedAt: row.4, deadline: row.5,
                    timesRequested: Int(row.6), status: row.7, attempts: Int(row.8), answeredAt: row.9, detail: row.10,
                    answer: row.11))
        }
        return result
    }

    /// Counts of consumption requests by status (for summaries and the local run).
    public func consumptionCounts() async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for try await (status, count) in try await self.client.query(
            "SELECT status, count(*) FROM consumption_requests GROUP BY status", logger: self.logger
        ).decode((String, Int).self) {
            counts[status] = count
        }
        return counts
    }

    // MARK: Statements (the scale benchmark prints their plans)

    /// The console's customer search: the customer a transaction id names, through the primary key of
    /// `transactions` (every environment listed, so the key's first column is bound).
    public static func customerQuery(_ query: String, bundleId: String) -> PostgresQuery {
        """
        SELECT (SELECT app_user_id FROM customer_bindings b WHERE b.bundle_id = t.bundle_id AND b.environment = t.environment
                  AND b.original_transaction_id = t.original_transaction_id),
               COALESCE(
                   (SELECT customer FROM entitlements e WHERE e.bundle_id = t.bundle_id AND e.environment = t.environment
                      AND e.original_transaction_id = t.original_transaction_id ORDER BY updated_at DESC LIMIT 1),
                   (SELECT customer FROM subscriptions s WHERE s.bundle_id = t.bundle_id AND s.environment = t.environment
                      AND s.original_transaction_id = t.original_transaction_id LIMIT 1),
                   t.original_transaction_id),
               t.original_transaction_id
        FROM transactions t
        WHERE t.environment = ANY(ARRAY['Production', 'Sandbox', 'Xcode', 'LocalTesting']) AND t.bundle_id = \(bundleId)
          AND (t.transaction_id = \(query) OR t.original_transaction_id = \(query))
        LIMIT 1
        """
    }

    /// The consumption requests of a customer or of their subscriptions, newest first.
    public static func consumptionQuery(bundleId: String, customer: String, subjects: [String]) -> PostgresQuery {
        """
        SELECT environment, transaction_id, original_transaction_id, reason, requested_at, deadline, times_requested, status, attempts,
               answered_at, detail, answer::text
        FROM consumption_requests WHERE bundle_id = \(bundleId) AND (customer = \(customer) OR original_transaction_id = ANY(\(subjects)))
        ORDER BY requested_at DESC
        """
    }
}
