public import Entitlements
import Foundation
import Logging
import PostgresNIO

// MARK: - CustomerLookup + what customer-api's POST reads

extension CustomerLookup {
    /// Who owns purchase `subject` now (see ``PurchaseOwners``).
    public func owner(environment: String, bundleId: String, subject: String, claimedToken: String?) async throws
        -> PurchaseOwnership.Owner
    {
        try await self.client.withConnection { connection in
            try await PurchaseOwners.owner(
                environment: environment, bundleId: bundleId, subject: subject, claimedToken: claimedToken,
                on: connection, logger: self.logger)
        }
    }

    /// The notification log's outcome of each id that is committed and no longer pending (absent: not yet).
    public func outcomes(of logIds: [String]) async throws -> [String: String] {
        let rows = try await self.client.query(
            """
            SELECT notification_uuid, outcome FROM notification_log WHERE notification_uuid = ANY(\(logIds)::text[]) AND outcome <> 'pending'
            """, logger: self.logger)
        var result: [String: String] = [:]
        for try await (id, outcome) in rows.decode((String, String).self) { result[id] = outcome }
        return result
    }
}
