import AppStoreModels
import Entitlements
import Foundation
import Logging
import PipelineRecords
import PostgresNIO

/// Writes a status request to the outbox (events go with their notification's facts, ``NotificationFacts``).
enum OutboxRows {
    /// Inserts a status request for refund-resolver, keyed by the subscription within its environment and app:
    /// the publisher relays it to the status-requests topic like any event, so the request is published exactly
    /// when its cause commits, in the trace of the input that asked for it (`traceParent`).
    static func insert(
        _ request: StatusRequest, traceParent: String? = nil, topics: PipelineTopics, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let payload = String(decoding: try AppStoreJSON.makeCanonicalEncoder().encode(request), as: UTF8.self)
        try await connection.query(
            """
            INSERT INTO outbox (event_id, topic, key, payload, environment, bundle_id, trace_parent)
            VALUES (\(request.requestId), \(topics.statusRequests), \(request.key), \(payload)::jsonb, \(request.environment),
                    \(request.bundleId ?? ""), \(traceParent))
            ON CONFLICT (event_id) DO NOTHING
            """, logger: logger)
    }
}
