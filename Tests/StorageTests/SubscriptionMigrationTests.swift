import AppStoreModels
import Entitlements
import Foundation
import JWSVerification
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import Storage
import TestSupport
import Testing

/// A subscription the App Store migrated to the Advanced Commerce API, in a real PostgreSQL written by the updater's
/// repository: the customer's access moves to the new subscription with one `entitlement.migrated` event, whatever
/// arrives first; the previous subscription's later notifications are kept and move nothing; an Advanced Commerce
/// item refund is one revocation event naming the item, and the subscription stands.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct SubscriptionMigrationTests {
    let logger: Logger = {
        var logger = Logger(label: "migration-test")
        logger.logLevel = .error
        return logger
    }()

    /// A notification of the migrated subscription `original` (product `pro.ac`), naming `previous`.
    static func migrated(
        _ type: String, original: String, previous: String, day: Int64, token: String? = nil,
        items: AdvancedCommerceTransactionInfo? = nil
    ) throws -> VerifiedNotificationRecord {
        var record = VerifiedRecords.step(type, original: original, day: day, expiresDay: day + 30, status: .active)
        record.notification.transaction?.productId = "pro.ac"
        record.notification.transaction?.previousOriginalTransactionId = previous
        record.notification.transaction?.appAccountToken = token
        record.notification.transaction?.revocationDate = nil
        record.notification.transaction?.rawRevocationReason = nil
        if let items { record.notification.transaction?.advancedCommerceInfo = try JSONValue(encoding: items) }
        return record
    }

    /// (customer, product, original, active) of every entitlement row.
    func rows(client: PostgresClient) async throws -> Set<String> {
        var rows = Set<String>()
        for try await (customer, product, original, active) in try await client.query(
            "SELECT customer, product_id, original_transaction_id, active FROM entitlements", logger: self.logger
        ).decode((String, String, String, Bool).self) {
            rows.insert("\(customer) \(product) \(original) \(active)")
        }
        return rows
    }

    /// The outbox's events of a type, as decoded events.
    func events(_ type: String, client: PostgresClient) async throws -> [EntitlementEvent] {
        var events: [EntitlementEvent] = []
        for try await payload in try await client.query(
            "SELECT payload::text FROM outbox WHERE payload->>'eventType' = \(type) ORDER BY id", logger: self.logger
        ).decode(String.self) {
            events.append(try JSONDecoder().decode(EntitlementEvent.self, from: Data(payload.utf8)))
        }
        return events
    }

    /// Runs `body` with a migrated PostgreSQL, the updater's repository on it and the default topics.
    func withRepository(_ body: @Sendable (PostgresClient, EntitlementRepository, PipelineTopics) async throws -> Void)
        async throws
    {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, _ in
            try await body(client, EntitlementRepository(client: client, logger: logger), PipelineTopics())
        }
    }

    @Test func theCustomerAndTheAccessMoveOnceAndThePreviousSubscriptionMovesNothingAfter() async throws {
        try await self.withRepository { client, repository, topics in
            let subscribed = VerifiedRecords.step(
                "SUBSCRIBED", "INITIAL_BUY", original: "old-1", day: 0, expiresDay: 30)
            _ = try await repository.apply(subscribed, receivedAt: nil)
            _ = try await repository.apply(
                CustomerBindingTests.posted(subscribed, user: "user-1", proof: .admin(operator: "test")),
                receivedAt: nil)
            #expect(try await self.rows(client: client) == ["user-1 pro old-1 true"])

            let migration = try Self.migrated("MIGRATION", original: "new-1", previous: "old-1", day: 10)
            #expect(try await repository.apply(migration, receivedAt: nil) == .recorded(.applied))
            #expect(
                try await self.rows(client: client) == ["user-1 pro.ac new-1 true"],
                "the entitlement moved to the new subscription, under the same app user")
            let moved = try await self.events("entitlement.migrated", client: client)
            #expect(moved.count == 1)
            #expect(moved.first?.customer == "user-1")
            #expect(moved.first?.previousProductId == "pro")
            #expect(moved.first?.migration?.previousOriginalTransactionId == "old-1")
            #expect(moved.first?.migration?.previousState?.active == false)
            #expect(moved.first?.state?.originalTransactionId == "new-1")
            #expect(try await self.events("entitlement.granted", client: client).count == 1, "only old-1's purchase")

            // The previous subscription's late word, and a redelivery of the migration, move nothing.
            let late = VerifiedRecords.step("DID_RENEW", original: "old-1", day: 20, expiresDay: 50)
            #expect(try await repository.apply(late, receivedAt: nil) == .recorded(.stale))
            #expect(try await repository.apply(migration, receivedAt: nil) == .duplicate)
            let renewed = try Self.migrated("DID_RENEW", original: "new-1", previous: "old-1", day: 40)
            #expect(try await repository.apply(renewed, receivedAt: nil) == .recorded(.applied))
            #expect(try await self.rows(client: client) == ["user-1 pro.ac new-1 true"])
            #expect(try await self.events("entitlement.migrated", client: client).count == 1, "one event, once")
            // Looking up the previous subscription's id finds the subscription it was migrated to.
            let view = try await CustomerLookup(client: client, logger: self.logger).view(
                bundleId: "com.example.app", customer: "old-1", kind: .originalTransactionId, asOf: 0)
            #expect(
                view.entitlements.contains("\"pro.ac\"") && view.entitlements.contains("new-1"), "\(view.entitlements)")
            var stored = 0
            for try await count in try await client.query(
                "SELECT count(*)::int FROM transactions WHERE original_transaction_id = 'old-1'", logger: self.logger
            ).decode(Int.self) { stored = count }
            #expect(stored == 2, "the previous subscription's late transaction is still stored")
        }
    }

    @Test func theMigrationArrivingFirstKeepsTheCustomerThePreviousSubscriptionWouldHaveHad() async throws {
        try await self.withRepository { client, repository, topics in
            // No token: the previous subscription's customer is its originalTransactionId.
            _ = try await repository.apply(
                try Self.migrated("MIGRATION", original: "new-2", previous: "old-2", day: 10), receivedAt: nil)
            _ = try await repository.apply(
                VerifiedRecords.step("SUBSCRIBED", "INITIAL_BUY", original: "old-2", day: 0, expiresDay: 30),
                receivedAt: nil)
            // A token the new subscription carries names the customer.
            let token = "6f1c1c1e-0b7e-4d59-8a39-3d35b1f0a001"
            _ = try await repository.apply(
                try Self.migrated("MIGRATION", original: "new-3", previous: "old-3", day: 10, token: token),
                receivedAt: nil)
            #expect(
                try await self.rows(client: client) == ["old-2 pro.ac new-2 true", "\(token) pro.ac new-3 true"],
                "one row per customer, never the previous subscription's")
            #expect(try await self.events("entitlement.migrated", client: client).map(\.customer) == ["old-2", token])
        }
    }

    @Test func anAdvancedCommerceItemRefundIsOneRevocationEventAndTheSubscriptionStands() async throws {
        try await self.withRepository { client, repository, topics in
            var base = AdvancedCommerceTransactionItem()
            base.sku = "pro-monthly"
            base.price = 9_990
            var addOn = AdvancedCommerceTransactionItem()
            addOn.sku = "extra-storage"
            addOn.price = 1_990
            var info = AdvancedCommerceTransactionInfo()
            info.items = [base, addOn]
            _ = try await repository.apply(
                try Self.migrated("MIGRATION", original: "new-4", previous: "old-4", day: 1, items: info),
                receivedAt: nil)
            var refund = AdvancedCommerceRefund()
            refund.refundAmount = 1_990
            refund.refundDate = Timestamp(millisecondsSince1970: VerifiedRecords.start + 3 * VerifiedRecords.day)
            refund.refundReason = "UNSATISFIED_WITH_PURCHASE"
            refund.refundType = "FULL"
            info.items?[1].refunds = [refund]
            info.items?[1].revocationDate = refund.refundDate
            let refunded = try Self.migrated("REFUND", original: "new-4", previous: "old-4", day: 3, items: info)
            #expect(try await repository.apply(refunded, receivedAt: nil) == .recorded(.applied))
            #expect(try await self.rows(client: client) == ["old-4 pro.ac new-4 true"], "the subscription stands")
            let events = try await self.events("revocation.items-refunded", client: client)
            #expect(events.count == 1)
            #expect(events.first?.stream == .revocations)
            let item = try #require(events.first?.refundedItems?.first)
            #expect(events.first?.refundedItems?.count == 1, "only the refunded item")
            #expect(item.sku == "extra-storage")
            #expect(item.revokedAt == refund.refundDate?.millisecondsSince1970)
            #expect(item.refunds.count == 1)
            #expect(item.refunds.first?.amount == "1.99", "milliunits as an exact decimal")
            #expect(item.refunds.first?.refundedAt == item.revokedAt)
            #expect(item.refunds.first?.reason == "UNSATISFIED_WITH_PURCHASE")
            #expect(item.refunds.first?.type == "FULL")
            #expect(try await self.events("revocation.refunded", client: client).isEmpty)
        }
    }
}
