public import Foundation
import Logging
import PostgresNIO

// MARK: - CustomerLookup + what customer-api's POST reads

extension CustomerLookup {
    /// A purchase's current owner: who its subject is bound to.
    public struct Binding: Hashable, Sendable {
        public var environment: String
        public var originalTransactionId: String
        public var appUserId: String
    }

    /// The bindings of these subjects (environment, originalTransactionId) in one app.
    public func bindings(bundleId: String, subjects: [(environment: String, originalTransactionId: String)]) async throws -> [Binding] {
        guard !subjects.isEmpty else { return [] }
        let rows = try await self.client.query("""
            SELECT b.environment, b.original_transaction_id, b.app_user_id
            FROM customer_bindings b
            JOIN unnest(\(subjects.map(\.environment))::text[], \(subjects.map(\.originalTransactionId))::text[]) AS s(environment, original)
              ON b.environment = s.environment AND b.original_transaction_id = s.original
            WHERE b.bundle_id = \(bundleId)
            """, logger: self.logger)
        var result: [Binding] = []
        for try await (environment, original, user) in rows.decode((String, String, String).self) {
            result.append(Binding(environment: environment, originalTransactionId: original, appUserId: user))
        }
        return result
    }

    /// The notification log's outcome of each id that is committed and no longer pending (absent: not yet).
    public func outcomes(of logIds: [String]) async throws -> [String: String] {
        let rows = try await self.client.query("""
            SELECT notification_uuid, outcome FROM notification_log WHERE notification_uuid = ANY(\(logIds)::text[]) AND outcome <> 'pending'
            """, logger: self.logger)
        var result: [String: String] = [:]
        for try await (id, outcome) in rows.decode((String, String).self) { result[id] = outcome }
        return result
    }
}
