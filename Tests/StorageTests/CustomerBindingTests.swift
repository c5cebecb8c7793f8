import AppStoreModels
import Entitlements
import JWSVerification
import Logging
import NotificationPipeline
import PostgresNIO
import Storage
import Testing
import TestSupport

/// Who a purchase belongs to, in a real PostgreSQL written by the updater's repository: an app user bound by
/// a posted purchase owns the subscription's later notifications; a refused claim changes nothing; an
/// appAccountToken appearing later moves the rows once, and nothing stays active under two customers.
@Suite(.serialized, .timeLimit(.minutes(3))) struct CustomerBindingTests {
    let logger: Logger = {
        var logger = Logger(label: "binding-test")
        logger.logLevel = .error
        return logger
    }()

    /// A purchase the app posted for `user`: the transaction of `record`, signed at its notification's time.
    static func posted(_ record: VerifiedNotificationRecord, user: String, policy: AppPurchaseRecord.ConflictPolicy = .refuse,
                       request: String = "req-1") -> AppPurchaseRecord {
        AppPurchaseRecord(requestId: request, appUserId: user, onConflict: policy, source: .signedTransaction, environment: record.environment,
                          transaction: record.notification.transaction!, signedTransactionInfo: "signed")
    }

    /// (customer, active) of every entitlement row of `original`, and the binding.
    func rows(_ original: String, client: PostgresClient) async throws -> (rows: [String: Bool], boundTo: String?) {
        var rows: [String: Bool] = [:]
        for try await (customer, active) in try await client.query(
            "SELECT customer, active FROM entitlements WHERE original_transaction_id = \(original)", logger: logger).decode((String, Bool).self) {
            rows[customer] = active
        }
        var bound: String?
        for try await user in try await client.query(
            "SELECT app_user_id FROM customer_bindings WHERE original_transaction_id = \(original)", logger: logger).decode(String.self) {
            bound = user
        }
        return (rows, bound)
    }

    /// The `previousCustomer → customer` of every customer-changed event in the outbox.
    func moves(client: PostgresClient) async throws -> [String] {
        var moves: [String] = []
        for try await (from, to) in try await client.query("""
            SELECT payload->>'previousCustomer', payload->>'customer' FROM outbox
            WHERE payload->>'eventType' = 'entitlement.customer-changed' ORDER BY id
            """, logger: logger).decode((String, String).self) {
            moves.append("\(from) → \(to)")
        }
        return moves
    }

    @Test func aBoundAppUserOwnsLaterNotificationsAndARefusedClaimChangesNothing() async throws {
        let logger = self.logger
        try await withLocalPostgres { url in
            try await DatabaseClient.with(try DatabaseSettings(url: url), logger: logger) { client in
                try await MigrationRunner().migrate(client: client, logger: logger)
                let repository = EntitlementRepository(client: client, logger: logger)
                let topics = PipelineTopics()
                let subscribed = VerifiedRecords.step("SUBSCRIBED", "INITIAL_BUY", original: "sub-1", day: 0, expiresDay: 30)
                _ = try await repository.apply(subscribed, receivedAt: nil, topics: topics)
                #expect(try await self.rows("sub-1", client: client).rows == ["sub-1": true], "no token: keyed by originalTransactionId")

                let claim = Self.posted(subscribed, user: "user-1")
                #expect(try await repository.apply(claim, receivedAt: nil, topics: topics) == .recorded(.applied))
                #expect(try await self.rows("sub-1", client: client) == (["user-1": true], "user-1"), "the rows moved to the app user")
                #expect(try await repository.apply(claim, receivedAt: nil, topics: topics) == .duplicate)

                _ = try await repository.apply(VerifiedRecords.step("DID_RENEW", original: "sub-1", day: 30, expiresDay: 60), receivedAt: nil, topics: topics)
                _ = try await repository.apply(VerifiedRecords.step("EXPIRED", "VOLUNTARY", original: "sub-1", day: 60, expiresDay: 60),
                                               receivedAt: nil, topics: topics)
                #expect(try await self.rows("sub-1", client: client) == (["user-1": false], "user-1"), "later notifications land on the app user")

                let refused = Self.posted(subscribed, user: "user-2", request: "req-2")
                #expect(try await repository.apply(refused, receivedAt: nil, topics: topics) == .recorded(.conflict))
                #expect(try await self.rows("sub-1", client: client) == (["user-1": false], "user-1"), "a refused claim changes nothing")

                let transferred = Self.posted(subscribed, user: "user-2", policy: .transfer, request: "req-3")
                #expect(try await repository.apply(transferred, receivedAt: nil, topics: topics) == .recorded(.applied))
                #expect(try await self.rows("sub-1", client: client) == (["user-2": false], "user-2"))
                #expect(try await self.moves(client: client) == ["sub-1 → user-1", "user-1 → user-2"])
            }
        }
    }

    @Test func anAppAccountTokenAppearingLaterMovesTheRowsOnce() async throws {
        let logger = self.logger
        try await withLocalPostgres { url in
            try await DatabaseClient.with(try DatabaseSettings(url: url), logger: logger) { client in
                try await MigrationRunner().migrate(client: client, logger: logger)
                let repository = EntitlementRepository(client: client, logger: logger)
                let topics = PipelineTopics()
                _ = try await repository.apply(VerifiedRecords.step("SUBSCRIBED", "INITIAL_BUY", original: "sub-2", day: 0, expiresDay: 30),
                                               receivedAt: nil, topics: topics)
                let token = "5b7a4c38-2f0e-4d5e-9b61-0c8f4f2e9a11"
                var renewed = VerifiedRecords.step("DID_RENEW", original: "sub-2", day: 30, expiresDay: 60)
                renewed.notification.transaction?.appAccountToken = token
                _ = try await repository.apply(renewed, receivedAt: nil, topics: topics)
                #expect(try await self.rows("sub-2", client: client).rows == [token: true], "one row, under the token")
                // A late notification without the token does not move them back.
                var late = VerifiedRecords.step("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", original: "sub-2", day: 10, expiresDay: 30)
                late.notification.transaction?.appAccountToken = nil
                #expect(try await repository.apply(late, receivedAt: nil, topics: topics) == .recorded(.stale))
                #expect(try await self.rows("sub-2", client: client).rows == [token: true])
                #expect(try await self.moves(client: client) == ["sub-2 → \(token)"])
            }
        }
    }
}
