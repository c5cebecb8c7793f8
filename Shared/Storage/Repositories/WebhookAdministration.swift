public import Foundation
public import Logging
public import PostgresNIO

/// What the webhook administration routes do to PostgreSQL (customer-api's role): register endpoints with their first
/// secret, add a secret (the older ones expire after an overlap), re-enable a disabled endpoint, read the delivery log,
/// and queue deliveries again (replay). Every statement names the app, so one app's administrator never reaches
/// another's endpoint. Secrets are written, never read back.
public struct WebhookAdministration: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    // MARK: - Endpoints

    /// Registers an endpoint signed with `secret` (`whsec_…`); returns it.
    public func register(_ new: NewWebhookEndpoint, secret: String) async throws -> WebhookEndpointRow {
        let id = Self.identifier("we_"), secretId = Self.identifier("ws_")
        try await self.client.withTransaction(logger: self.logger) { connection in
            try await connection.query(
                """
                INSERT INTO webhook_endpoints (id, environment, bundle_id, url, event_types, rate_per_second, concurrency)
                VALUES (\(id), \(new.environment), \(new.bundleId), \(new.url), \(new.eventTypes), \(new.ratePerSecond),
                        \(new.concurrency))
                """, logger: self.logger)
            try await connection.query(
                "INSERT INTO webhook_secrets (id, endpoint_id, secret) VALUES (\(secretId), \(id), \(secret))",
                logger: self.logger)
        }
        guard let row = try await self.endpoint(id: id, bundleId: new.bundleId) else {
            throw StorageError("the endpoint \(id) was not found after it was registered")
        }
        return row
    }

    /// The app's endpoints (in one environment, or both), oldest first.
    public func endpoints(bundleId: String, environment: String?) async throws -> [WebhookEndpointRow] {
        try await self.rows(
            """
            SELECT id, environment, bundle_id, url, event_types, rate_per_second, concurrency, created_at, disabled_at,
                   disabled_reason,
                   (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending')
            FROM webhook_endpoints e
            WHERE bundle_id = \(bundleId) AND (\(environment)::text IS NULL OR environment = \(environment))
            ORDER BY created_at, id
            """)
    }

    /// One of the app's endpoints.
    public func endpoint(id: String, bundleId: String) async throws -> WebhookEndpointRow? {
        try await self.rows(
            """
            SELECT id, environment, bundle_id, url, event_types, rate_per_second, concurrency, created_at, disabled_at,
                   disabled_reason,
                   (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending')
            FROM webhook_endpoints e WHERE id = \(id) AND bundle_id = \(bundleId)
            """
        ).first
    }

    /// Adds `secret` to the endpoint; the secrets it had keep signing for `overlap`, so receivers can switch; returns
    /// the endpoint, or nil when the app has no such endpoint.
    public func rotateSecret(
        endpointId: String, bundleId: String, secret: String, overlap: TimeInterval
    ) async throws -> WebhookEndpointRow? {
        guard try await self.endpoint(id: endpointId, bundleId: bundleId) != nil else { return nil }
        let expiry = Date().addingTimeInterval(overlap), secretId = Self.identifier("ws_")
        try await self.client.withTransaction(logger: self.logger) { connection in
            try await connection.query(
                """
                UPDATE webhook_secrets SET expires_at = \(expiry)
                WHERE endpoint_id = \(endpointId) AND (expires_at IS NULL OR expires_at > \(expiry))
                """, logger: self.logger)
            try await connection.query(
                "INSERT INTO webhook_secrets (id, endpoint_id, secret) VALUES (\(secretId), \(endpointId), \(secret))",
                logger: self.logger)
        }
        return try await self.endpoint(id: endpointId, bundleId: bundleId)
    }

    /// Enables a disabled endpoint: its backlog is due at once and its retry horizon starts again. False when the app
    /// has no such endpoint.
    public func enable(endpointId: String, bundleId: String) async throws -> Bool {
        try await self.client.withTransaction(logger: self.logger) { connection in
            let found =
                try await connection.query(
                    """
                    UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL
                    WHERE id = \(endpointId) AND bundle_id = \(bundleId) RETURNING 1
                    """, logger: self.logger
                ).collect().count > 0
            guard found else { return false }
            try await connection.query(
                """
                UPDATE webhook_deliveries SET next_attempt_at = now(), first_failure_at = NULL, leased_until = NULL
                WHERE endpoint_id = \(endpointId) AND state = 'pending'
                """, logger: self.logger)
            return true
        }
    }

    // MARK: - The delivery log

    /// The endpoint's deliveries created in `[from, to)`, newest first, each with its attempts; `state` filters.
    public func deliveries(
        endpointId: String, bundleId: String, from: Date?, to: Date?, state: String?, limit: Int
    ) async throws -> [WebhookDeliveryLogEntry] {
        var entries: [WebhookDeliveryLogEntry] = []
        let rows = try await self.client.query(
            """
            SELECT d.id, d.event_id, d.event_type, d.subject, d.sequence, d.state, d.created_at, d.delivered_at,
                   d.next_attempt_at
            FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
            WHERE d.endpoint_id = \(endpointId) AND e.bundle_id = \(bundleId)
              AND (\(from)::timestamptz IS NULL OR d.created_at >= \(from))
              AND (\(to)::timestamptz IS NULL OR d.created_at < \(to))
              AND (\(state)::text IS NULL OR d.state = \(state))
            ORDER BY d.id DESC LIMIT \(limit)
            """, logger: self.logger)
        for try await (id, eventId, eventType, subject, sequence, state, createdAt, deliveredAt, nextAttemptAt)
            in rows.decode((Int64, String, String, String, Int64?, String, Date, Date?, Date).self)
        {
            entries.append(
                WebhookDeliveryLogEntry(
                    id: id, eventId: eventId, eventType: eventType, subject: subject, sequence: sequence, state: state,
                    createdAt: createdAt, deliveredAt: deliveredAt,
                    nextAttemptAt: state == "pending" ? nextAttemptAt : nil, attempts: []))
        }
        guard !entries.isEmpty else { return [] }
        let ids = entries.map(\.id)
        var attempts: [Int64: [WebhookDeliveryLogEntry.Attempt]] = [:]
        let attemptRows = try await self.client.query(
            """
            SELECT delivery_id, attempted_at, status, latency_ms, error, response FROM webhook_attempts
            WHERE delivery_id = ANY(\(ids)) ORDER BY attempted_at
            """, logger: self.logger)
        for try await (id, attemptedAt, status, latency, error, response)
            in attemptRows.decode((Int64, Date, Int32?, Int32, String?, String?).self)
        {
            attempts[id, default: []].append(
                .init(
                    attemptedAt: attemptedAt, status: status.map(Int.init), latencyMs: Int(latency), error: error,
                    response: response))
        }
        return entries.map { entry in
            var entry = entry
            entry.attempts = attempts[entry.id] ?? []
            return entry
        }
    }

    // MARK: - Replay

    /// Queues one delivery again (sent with the same `webhook-id`, so a receiver that has it deduplicates); false when
    /// the app's endpoint has no such delivery.
    public func replay(endpointId: String, bundleId: String, deliveryId: Int64) async throws -> Bool {
        try await self.replay(endpointId: endpointId, bundleId: bundleId, deliveryId: deliveryId, from: nil, to: nil)
            > 0
    }

    /// Queues again every delivery to the endpoint created in `[from, to)`; returns how many.
    public func replay(endpointId: String, bundleId: String, from: Date, to: Date) async throws -> Int {
        try await self.replay(endpointId: endpointId, bundleId: bundleId, deliveryId: nil, from: from, to: to)
    }

    /// Marks the chosen deliveries pending and due now.
    private func replay(
        endpointId: String, bundleId: String, deliveryId: Int64?, from: Date?, to: Date?
    ) async throws -> Int {
        try await self.client.query(
            """
            UPDATE webhook_deliveries d
            SET state = 'pending', next_attempt_at = now(), first_failure_at = NULL, leased_until = NULL
            FROM webhook_endpoints e
            WHERE e.id = d.endpoint_id AND d.endpoint_id = \(endpointId) AND e.bundle_id = \(bundleId)
              AND (\(deliveryId)::bigint IS NULL OR d.id = \(deliveryId))
              AND (\(from)::timestamptz IS NULL OR d.created_at >= \(from))
              AND (\(to)::timestamptz IS NULL OR d.created_at < \(to))
            RETURNING 1
            """, logger: self.logger
        ).collect().count
    }

    // MARK: - Reading endpoints

    /// The endpoints a query selects (its columns as in ``endpoints(bundleId:environment:)``), with their secrets.
    private func rows(_ query: PostgresQuery) async throws -> [WebhookEndpointRow] {
        var endpoints: [WebhookEndpointRow] = []
        for try await row in try await self.client.query(query, logger: self.logger) {
            let (
                id, environment, bundleId, url, eventTypes, rate, concurrency, createdAt, disabledAt, reason, pending
            ) =
                try row.decode(
                    (String, String, String, String, [String], Int32, Int32, Date, Date?, String?, Int64).self)
            endpoints.append(
                WebhookEndpointRow(
                    id: id, environment: environment, bundleId: bundleId, url: url, eventTypes: eventTypes,
                    ratePerSecond: Int(rate), concurrency: Int(concurrency), createdAt: createdAt,
                    disabledAt: disabledAt, disabledReason: reason, secrets: [], pending: Int(pending)))
        }
        guard !endpoints.isEmpty else { return [] }
        let ids = endpoints.map(\.id)
        var secrets: [String: [WebhookEndpointRow.SecretInfo]] = [:]
        let secretRows = try await self.client.query(
            """
            SELECT id, endpoint_id, created_at, expires_at FROM webhook_secrets
            WHERE endpoint_id = ANY(\(ids)) ORDER BY created_at DESC, id
            """, logger: self.logger)
        for try await (id, endpointId, createdAt, expiresAt) in secretRows.decode((String, String, Date, Date?).self) {
            secrets[endpointId, default: []].append(.init(id: id, createdAt: createdAt, expiresAt: expiresAt))
        }
        return endpoints.map { endpoint in
            var endpoint = endpoint
            endpoint.secrets = secrets[endpoint.id] ?? []
            return endpoint
        }
    }

    /// A random identifier with a prefix (`we_` endpoints, `ws_` secrets): 16 hex digits.
    static func identifier(_ prefix: String) -> String {
        prefix + String(format: "%016llx", UInt64.random(in: .min ... .max))
    }
}
