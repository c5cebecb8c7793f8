public import Foundation
public import Logging
public import PostgresNIO

/// The webhook-dispatcher's durable backlog (its role): events queued per endpoint as they are consumed, leased to a
/// replica in order per endpoint and subject, written back with each attempt's log line, and endpoints disabled. A
/// replica holds in memory only the deliveries it has leased, so memory does not grow with the backlog, and a lease
/// that a killed replica held runs out and the delivery is tried again.
public struct WebhookBacklog: Sendable {
    /// The event type announced to an app's other endpoints when one of its endpoints is disabled.
    public static let endpointDisabledType = "webhook.endpoint-disabled"

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    // MARK: - Endpoints

    /// The enabled endpoints with their unexpired secrets, newest secret first.
    public func targets() async throws -> [WebhookTarget] {
        var targets: [WebhookTarget] = []
        let rows = try await self.client.query(
            """
            SELECT e.id, e.environment, e.bundle_id, e.url, e.rate_per_second, e.concurrency,
                   cardinality(e.event_types) > 0,
                   array(SELECT s.secret FROM webhook_secrets s
                         WHERE s.endpoint_id = e.id AND (s.expires_at IS NULL OR s.expires_at > now())
                         ORDER BY s.created_at DESC, s.id)
            FROM webhook_endpoints e WHERE e.disabled_at IS NULL ORDER BY e.id
            """, logger: self.logger)
        for try await (id, environment, bundleId, url, rate, concurrency, filters, secrets)
            in rows.decode((String, String, String, String, Int32, Int32, Bool, [String]).self)
        {
            targets.append(
                WebhookTarget(
                    id: id, environment: environment, bundleId: bundleId, url: url, ratePerSecond: Int(rate),
                    concurrency: Int(concurrency), filtersTypes: filters, secrets: secrets))
        }
        return targets
    }

    /// Disables an enabled endpoint for `reason` and queues a `webhook.endpoint-disabled` event for the app's other
    /// enabled endpoints (of its environment) that take it; false when it was not enabled. Its backlog is kept.
    public func disable(endpointId: String, reason: String, at time: Date = Date()) async throws -> Bool {
        try await self.client.withTransaction(logger: self.logger) { connection in
            let rows = try await connection.query(
                """
                UPDATE webhook_endpoints SET disabled_at = \(time), disabled_reason = \(reason)
                WHERE id = \(endpointId) AND disabled_at IS NULL RETURNING environment, bundle_id, url
                """, logger: self.logger)
            var disabled: (String, String, String)?
            for try await row in rows.decode((String, String, String).self) { disabled = row }
            guard let (environment, bundleId, url) = disabled else { return false }
            let eventId = "endpoint-disabled-\(endpointId)-\(Int64(time.timeIntervalSince1970 * 1000))"
            let payload = Self.disabledEvent(
                eventId: eventId, endpointId: endpointId, url: url, reason: reason, time: time)
            try await connection.query(
                """
                INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, subject, payload, published_at)
                SELECT e.id, \(eventId), \(Self.endpointDisabledType), \(endpointId), \(payload), \(time)
                FROM webhook_endpoints e
                WHERE e.environment = \(environment) AND e.bundle_id = \(bundleId) AND e.id <> \(endpointId)
                  AND e.disabled_at IS NULL
                  AND (cardinality(e.event_types) = 0 OR \(Self.endpointDisabledType) = ANY(e.event_types))
                ON CONFLICT (endpoint_id, event_id) DO NOTHING
                """, logger: self.logger)
            return true
        }
    }

    /// The JSON of a `webhook.endpoint-disabled` event.
    static func disabledEvent(eventId: String, endpointId: String, url: String, reason: String, time: Date) -> String {
        struct Body: Encodable {
            var eventId: String
            var eventType = WebhookBacklog.endpointDisabledType
            var occurredAt: Int64
            var subject: String
            var endpointId: String
            var url: String
            var reason: String
        }
        let body = Body(
            eventId: eventId, occurredAt: Int64(time.timeIntervalSince1970 * 1000), subject: endpointId,
            endpointId: endpointId, url: url, reason: reason)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(body)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    // MARK: - Queueing

    /// Queues each event for every endpoint of its environment and app whose filter takes its type (an event queued
    /// before, after a rebalance or a crash, is not queued twice); returns how many deliveries each endpoint got.
    @discardableResult
    public func enqueue(_ events: [WebhookEvent]) async throws -> [String: Int] {
        guard !events.isEmpty else { return [:] }
        var queued: [String: Int] = [:]
        let rows = try await self.client.query(
            """
            INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, subject, sequence, payload, published_at)
            SELECT e.id, ev.event_id, ev.event_type, ev.subject, NULLIF(ev.sequence, -1), ev.payload, ev.published_at
            FROM unnest(\(events.map(\.environment))::text[], \(events.map(\.bundleId))::text[],
                        \(events.map(\.eventId))::text[], \(events.map(\.eventType))::text[],
                        \(events.map(\.subject))::text[], \(events.map { $0.sequence ?? -1 })::bigint[],
                        \(events.map(\.payload))::text[], \(events.map(\.publishedAt))::timestamptz[])
                 WITH ORDINALITY AS ev(environment, bundle_id, event_id, event_type, subject, sequence, payload,
                                       published_at, n)
            JOIN webhook_endpoints e ON e.environment = ev.environment AND e.bundle_id = ev.bundle_id
              AND (cardinality(e.event_types) = 0 OR ev.event_type = ANY(e.event_types))
            ORDER BY ev.n, e.id
            ON CONFLICT (endpoint_id, event_id) DO NOTHING
            RETURNING endpoint_id
            """, logger: self.logger)
        for try await endpointId in rows.decode(String.self) { queued[endpointId, default: 0] += 1 }
        return queued
    }

    // MARK: - Delivering

    /// Leases up to `limit` deliveries of the endpoint for `lease`: those due whose subject has no earlier pending
    /// delivery (so a subject's deliveries go one at a time, in `sequence` order, then in the order queued), oldest
    /// due first.
    ///
    /// A subject's events come from three topics (and two partitions when a purchase changes customer), so an event
    /// may be read before the one numbered just before it. With `predecessor`, a delivery whose predecessor
    /// (`sequence` − 1) is not queued for the endpoint yet waits for it: until `seconds` after its own queueing, and
    /// until the intake was seen caught up at a moment at least that late (then the predecessor, had it been published
    /// by then, would be queued: it predates the endpoint, or was pruned). Not caught up since start: it waits. Nil
    /// for an endpoint that filters types, which sees gaps by design.
    public func claim(endpointId: String, limit: Int, lease: TimeInterval, predecessor: PredecessorWait? = nil)
        async throws -> [ClaimedDelivery]
    {
        let waits = predecessor != nil, wait = predecessor?.seconds ?? 0
        let caughtUp = predecessor?.intakeCaughtUpAgo != nil, caughtUpAgo = predecessor?.intakeCaughtUpAgo ?? 0
        var claimed: [ClaimedDelivery] = []
        let rows = try await self.client.query(
            """
            WITH candidates AS (
                SELECT d.id FROM webhook_deliveries d
                WHERE d.endpoint_id = \(endpointId) AND d.state = 'pending' AND d.next_attempt_at <= now()
                  AND (d.leased_until IS NULL OR d.leased_until < now())
                  AND NOT EXISTS (
                      SELECT 1 FROM webhook_deliveries o
                      WHERE o.endpoint_id = d.endpoint_id AND o.subject = d.subject AND o.state = 'pending'
                        AND (coalesce(o.sequence, 0), o.id) < (coalesce(d.sequence, 0), d.id))
                  AND (NOT \(waits) OR d.sequence IS NULL OR d.sequence <= 1
                       OR (\(caughtUp) AND d.created_at + make_interval(secs => \(wait))
                                          <= now() - make_interval(secs => \(caughtUpAgo)))
                       OR EXISTS (
                           SELECT 1 FROM webhook_deliveries p
                           WHERE p.endpoint_id = d.endpoint_id AND p.subject = d.subject
                             AND p.sequence = d.sequence - 1))
                ORDER BY d.next_attempt_at, d.id
                LIMIT \(limit)
                FOR UPDATE SKIP LOCKED
            )
            UPDATE webhook_deliveries w SET leased_until = now() + make_interval(secs => \(lease))
            FROM candidates c WHERE w.id = c.id
            RETURNING w.id, w.event_id, w.event_type, w.subject, w.sequence, w.payload, w.attempts,
                      w.first_failure_at, w.published_at
            """, logger: self.logger)
        for try await (id, eventId, eventType, subject, sequence, payload, attempts, firstFailure, publishedAt)
            in rows.decode((Int64, String, String, String, Int64?, String, Int32, Date?, Date).self)
        {
            claimed.append(
                ClaimedDelivery(
                    id: id, eventId: eventId, eventType: eventType, subject: subject, sequence: sequence,
                    payload: payload, attempts: Int(attempts), firstFailureAt: firstFailure, publishedAt: publishedAt))
        }
        return claimed.sorted { $0.id < $1.id }
    }

    /// Writes back attempts of leased deliveries in one statement: each delivered one leaves the backlog, each
    /// failed one stays pending until its `retryAt`, and every attempt joins the delivery log.
    public func complete(_ attempts: [DeliveryAttemptRecord]) async throws {
        guard !attempts.isEmpty else { return }
        let never = Date(timeIntervalSince1970: 0)
        _ = try await self.client.query(
            """
            WITH r AS (
                SELECT * FROM unnest(\(attempts.map(\.deliveryId))::bigint[], \(attempts.map(\.attemptedAt))::timestamptz[],
                                     \(attempts.map { $0.retryAt ?? never })::timestamptz[],
                                     \(attempts.map { $0.retryAt == nil })::boolean[],
                                     \(attempts.map { Int32($0.status ?? -1) })::integer[],
                                     \(attempts.map { Int32(clamping: $0.latencyMs) })::integer[],
                                     \(attempts.map { $0.error ?? "" })::text[], \(attempts.map { $0.response ?? "" })::text[])
                     AS r(id, attempted_at, retry_at, delivered, status, latency_ms, error, response)
            ), updated AS (
                UPDATE webhook_deliveries d
                SET state = CASE WHEN r.delivered THEN 'delivered' ELSE 'pending' END,
                    attempts = d.attempts + 1,
                    delivered_at = CASE WHEN r.delivered THEN r.attempted_at END,
                    first_failure_at = CASE WHEN r.delivered THEN d.first_failure_at
                                            ELSE coalesce(d.first_failure_at, r.attempted_at) END,
                    next_attempt_at = CASE WHEN r.delivered THEN d.next_attempt_at ELSE r.retry_at END,
                    leased_until = NULL
                FROM r WHERE d.id = r.id
                RETURNING d.id
            )
            INSERT INTO webhook_attempts (delivery_id, attempted_at, status, latency_ms, error, response)
            SELECT r.id, r.attempted_at, NULLIF(r.status, -1), r.latency_ms, NULLIF(r.error, ''), NULLIF(r.response, '')
            FROM r JOIN updated u ON u.id = r.id
            """, logger: self.logger
        ).collect()
    }

    /// Releases leases without an attempt (the endpoint was disabled or the replica is stopping): due again at once.
    public func release(_ deliveryIds: [Int64]) async throws {
        guard !deliveryIds.isEmpty else { return }
        _ = try await self.client.query(
            "UPDATE webhook_deliveries SET leased_until = NULL WHERE id = ANY(\(deliveryIds))", logger: self.logger
        ).collect()
    }

    // MARK: - Keeping it small

    /// Deletes delivered deliveries (and their attempts) delivered before `cutoff`; returns how many.
    @discardableResult
    public func prune(deliveredBefore cutoff: Date, limit: Int = 10_000) async throws -> Int {
        try await self.client.query(
            """
            DELETE FROM webhook_deliveries WHERE id IN (
                SELECT id FROM webhook_deliveries WHERE state = 'delivered' AND delivered_at < \(cutoff) LIMIT \(limit))
            RETURNING 1
            """, logger: self.logger
        ).collect().count
    }
}

extension WebhookBacklog {
    /// How many deliveries are pending, and the oldest one's age in seconds (0 when none).
    public func pendingSummary() async throws -> (count: Int, oldestAge: Double) {
        let rows = try await self.client.query(
            """
            SELECT count(*), coalesce(extract(epoch FROM now() - min(created_at))::float8, 0)
            FROM webhook_deliveries WHERE state = 'pending'
            """, logger: self.logger)
        for try await (count, age) in rows.decode((Int64, Double).self) { return (Int(count), age) }
        return (0, 0)
    }
}
