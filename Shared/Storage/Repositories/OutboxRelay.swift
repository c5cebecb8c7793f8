public import Logging
public import PostgresNIO

/// One unpublished downstream event.
public struct OutboxRow: Sendable, Hashable {
    public var id: Int64
    public var eventId: String
    public var topic: String
    public var key: String
    /// The event JSON, exactly as written by the updater.
    public var payload: String
    /// The environment and app of the event (also in the key and the payload), for the record's headers.
    public var environment: String
    public var bundleId: String
    /// The W3C `traceparent` of the span that wrote the event (the updater's), when tracing was on.
    public var traceParent: String?

    public init(
        id: Int64, eventId: String, topic: String, key: String, payload: String, environment: String = "",
        bundleId: String = "", traceParent: String? = nil
    ) {
        self.traceParent = traceParent
        self.id = id
        self.eventId = eventId
        self.topic = topic
        self.key = key
        self.payload = payload
        self.environment = environment
        self.bundleId = bundleId
    }
}

/// Moves outbox rows to Kafka: takes the oldest unpublished rows, hands them to `publish` (which returns
/// once the broker acknowledged them all), then marks them published, all inside one transaction.
///
/// A transaction-scoped advisory lock lets one replica publish at a time, so one customer's events can
/// never overtake each other across replicas; the others find the lock taken and try again. A crash after
/// `publish` and before the commit publishes those events again with the same `eventId` (at-least-once).
public struct OutboxRelay: Sendable {
    static let lockKey: Int64 = 0x4F55_5442_4F58_0001
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Publishes up to `limit` rows; returns how many (0 when there were none or another replica holds the lock).
    public func relay(limit: Int, publish: @Sendable ([OutboxRow]) async throws -> Void) async throws -> Int {
        let logger = self.logger
        return try await self.client.withTransaction(logger: logger) { connection in
            var locked = false
            for try await value in try await connection.query(
                "SELECT pg_try_advisory_xact_lock(\(Self.lockKey))", logger: logger
            )
            .decode(Bool.self) { locked = value }
            guard locked else { return 0 }
            var rows: [OutboxRow] = []
            let query = try await connection.query(
                """
                SELECT id, event_id, topic, key, payload::text, environment, bundle_id, trace_parent
                FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT \(limit)
                """, logger: logger)
            for try await (id, eventId, topic, key, payload, environment, bundleId, traceParent) in query.decode(
                (Int64, String, String, String, String, String, String, String?).self)
            {
                rows.append(
                    OutboxRow(
                        id: id, eventId: eventId, topic: topic, key: key, payload: payload, environment: environment,
                        bundleId: bundleId, traceParent: traceParent))
            }
            guard !rows.isEmpty else { return 0 }
            try await publish(rows)
            try await connection.query(
                "UPDATE outbox SET published_at = now() WHERE id = ANY(\(rows.map(\.id)))", logger: logger)
            return rows.count
        }
    }

    /// How many events wait to be published.
    public func backlog() async throws -> Int {
        var count = 0
        for try await value in try await self.client.query(
            "SELECT count(*) FROM outbox WHERE published_at IS NULL", logger: self.logger
        )
        .decode(Int.self) { count = value }
        return count
    }
}
