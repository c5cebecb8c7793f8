import AppStoreModels
import Entitlements
import Foundation
import Logging
import NotificationPipeline
import PostgresNIO

/// Writes downstream events to the outbox, once per `eventId`, keyed by `environment/bundleId/customer`.
enum OutboxRows {
    /// A notification's events as the outbox's columns, in order (for one multi-row insert).
    struct Columns {
        var ids: [String] = []
        var topics: [String] = []
        var keys: [String] = []
        var payloads: [String] = []
        var environments: [String] = []
        var bundleIds: [String] = []

        /// The columns of `events`, each for its stream's topic, keyed by the customer within its environment and app.
        init(_ events: [EntitlementEvent], topics names: PipelineTopics) throws {
            let encoder = AppStoreJSON.makeCanonicalEncoder()
            for event in events {
                self.ids.append(event.eventId)
                let topic = switch event.stream {
                case .changes: names.entitlementChanges
                case .family: names.entitlementFamily
                case .revocations: names.entitlementRevocations
                }
                self.topics.append(topic)
                self.keys.append(event.key)
                self.payloads.append(String(decoding: try encoder.encode(event), as: UTF8.self))
                self.environments.append(event.facts.environment)
                self.bundleIds.append(event.facts.bundleId)
            }
        }
    }

    /// Inserts a status request for refund-resolver, keyed by the subscription within its environment and app:
    /// the publisher relays it to the status-requests topic like any event, so the request is published exactly
    /// when its cause commits.
    static func insert(_ request: StatusRequest, topics: PipelineTopics, on connection: PostgresConnection, logger: Logger) async throws {
        let payload = String(decoding: try AppStoreJSON.makeCanonicalEncoder().encode(request), as: UTF8.self)
        try await connection.query("""
            INSERT INTO outbox (event_id, topic, key, payload, environment, bundle_id)
            VALUES (\(request.requestId), \(topics.statusRequests), \(request.key), \(payload)::jsonb, \(request.environment),
                    \(request.bundleId ?? ""))
            ON CONFLICT (event_id) DO NOTHING
            """, logger: logger)
    }
}
