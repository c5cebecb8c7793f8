import EntitlementDecisions
import Entitlements
import Logging
import PostgresNIO

/// Writes a status request and its outbox row (events go with their notification's facts, ``NotificationFacts``).
enum OutboxRows {
    /// Records a status request for refund-resolver and inserts its outbox row (``EntitlementPlanner`` made it, keyed
    /// by the subscription within its environment and app, for the status-requests topic): the publisher relays it
    /// like any event, so the request is published exactly when its cause commits, in the trace that asked for it.
    static func insert(_ request: StatusRequest, event: OutboxEvent, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await connection.query(
            """
            INSERT INTO status_requests (request_id, original_transaction_id, environment, bundle_id, reason, notification_uuid)
            VALUES (\(request.requestId), \(request.originalTransactionId), \(request.environment), \(request.bundleId ?? ""),
                    \(request.reason), \(request.notificationUUID))
            ON CONFLICT (request_id) DO NOTHING
            """, logger: logger)
        try await Self.insert(event, on: connection, logger: logger)
    }

    /// Inserts one outbox row (a repeat of its event id changes nothing): what the publisher relays to its topic.
    static func insert(_ event: OutboxEvent, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO outbox (event_id, topic, key, payload, environment, bundle_id, trace_parent)
            VALUES (\(event.id), \(event.topic), \(event.key), \(event.payload)::json, \(event.environment), \(event.bundleId),
                    \(event.traceParent))
            ON CONFLICT (event_id) DO NOTHING
            """, logger: logger)
    }
}
