public import Logging
public import PipelineRecords
public import PostgresNIO

/// The renewal-time fail-over (WWDC21's advice): subscriptions whose entitlement is still active although its
/// end passed more than a margin ago, with no notification since, get a status request, exactly as an
/// ambiguous refund does: a `status_requests` row and its outbox record in one statement, so refund-resolver
/// asks Get All Subscription Statuses (within Apple's rate budget) and its snapshot settles the state. A lost
/// DID_RENEW, EXPIRED or DID_FAIL_TO_RENEW still ends in the right state. Each lapsed end is asked once (the
/// request id names it); replicas sweeping at once ask once between them.
public struct RenewalSweep: Sendable {
    let client: PostgresClient
    let logger: Logger
    let topics: PipelineTopics

    public init(client: PostgresClient, logger: Logger, topics: PipelineTopics) {
        self.client = client
        self.logger = logger
        self.topics = topics
    }

    /// The reason status requests of the sweep carry.
    public static let reason = "renewal-time sweep: the expiry passed with no newer notification"

    /// Requests the status of at most `batch` subscriptions whose active entitlement ended before `cutoff`
    /// (epoch ms); returns how many requests it wrote.
    public func sweep(endedBefore cutoff: Int64, batch: Int) async throws -> Int {
        let rows = try await self.client.query(
            Self.statement(endedBefore: cutoff, batch: batch, topics: self.topics), logger: self.logger)
        var written = 0
        for try await _ in rows.decode(Int.self) { written += 1 }
        return written
    }

    /// The sweep's one statement: up to `batch` lapsed active subscriptions, each asked once (its status request
    /// and outbox row written together). `EXPLAIN` of it is part of the scale benchmark's plans.
    public static func statement(endedBefore cutoff: Int64, batch: Int, topics: PipelineTopics) -> PostgresQuery {
        """
        WITH candidates AS (
            SELECT e.environment, e.bundle_id, e.original_transaction_id,
                   'renewal-sweep:' || e.environment || '/' || e.bundle_id || '/' || e.original_transaction_id || '/' || e.valid_until
                       AS request_id
            FROM entitlements e
            WHERE e.active AND e.revoked_at IS NULL AND e.valid_until < \(cutoff) AND e.environment IN ('Production', 'Sandbox')
              AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.environment = e.environment AND s.bundle_id = e.bundle_id
                                                          AND s.original_transaction_id = e.original_transaction_id)
              AND NOT EXISTS (SELECT 1 FROM status_requests r WHERE r.request_id = 'renewal-sweep:' || e.environment || '/' || e.bundle_id
                                                                 || '/' || e.original_transaction_id || '/' || e.valid_until)
            ORDER BY e.valid_until
            LIMIT \(batch)
        ), requested AS (
            INSERT INTO status_requests (request_id, original_transaction_id, environment, bundle_id, reason, notification_uuid)
            SELECT DISTINCT request_id, original_transaction_id, environment, bundle_id, \(Self.reason), 'renewal-sweep' FROM candidates
            ON CONFLICT (request_id) DO NOTHING
            RETURNING request_id, original_transaction_id, environment, bundle_id
        )
        INSERT INTO outbox (event_id, topic, key, payload, environment, bundle_id)
        SELECT request_id, \(topics.statusRequests), environment || '/' || bundle_id || '/' || original_transaction_id,
               json_build_object('requestId', request_id, 'originalTransactionId', original_transaction_id, 'environment', environment,
                                  'bundleId', bundle_id, 'reason', \(Self.reason)::text, 'notificationUUID', 'renewal-sweep'),
               environment, bundle_id
        FROM requested
        ON CONFLICT (event_id) DO NOTHING
        RETURNING 1
        """
    }
}
