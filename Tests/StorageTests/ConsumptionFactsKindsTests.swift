import AppStoreModels
import Entitlements
import Foundation
import Logging
import PipelineRecords
import PostgresNIO
import Storage
import TestSupport
import Testing

/// Consumption facts name the kind of id they are about, against real PostgreSQL: facts recorded for an app user
/// whose id equals a purchase's originalTransactionId, and for another purchase, never answer that purchase's
/// consumption request; facts of its bound app user (resolved through the binding) and of its own id do.
@Suite(.tags(.integration), .serialized) struct ConsumptionFactsKindsTests {
    let logger: Logger = {
        var logger = Logger(label: "consumption-facts-kinds")
        logger.logLevel = .error
        return logger
    }()

    /// What the consumption request of `original` recorded as the customer's consent (nil: no facts found).
    func consent(_ original: String, client: PostgresClient) async throws -> Bool?? {
        var consent: Bool?? = .none
        for try await value in try await client.query(
            """
            SELECT (facts->>'customerConsented')::boolean FROM consumption_requests
            WHERE original_transaction_id = \(original) ORDER BY requested_at DESC LIMIT 1
            """, logger: self.logger
        ).decode(Bool?.self) { consent = .some(value) }
        return consent
    }

    /// Facts for `customer` of kind `kind`, stored as the updater stores them.
    func record(_ customer: String, kind: String, consented: Bool, client: PostgresClient) async throws {
        try await ConsumptionRequests.store(
            ConsumptionFactsRecord(
                environment: "Sandbox", bundleId: "com.example.app", customer: customer, customerKind: kind,
                transactionId: "", customerConsented: consented, playTimeMinutes: nil, deliveryStatus: nil,
                consumptionPercentage: nil, userStatus: nil),
            client: client, logger: self.logger)
    }

    @Test func factsAnswerOnlyForTheKindOfIdTheyName() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, _ in
            let repository = EntitlementRepository(client: client, logger: logger)
            let subscribed = VerifiedRecords.step("SUBSCRIBED", "INITIAL_BUY", original: "1000", day: 0, expiresDay: 30)
            _ = try await repository.apply(subscribed, receivedAt: nil)
            _ = try await repository.apply(
                AppPurchaseRecord(
                    requestId: "bind", appUserId: "user-7", onConflict: .refuse,
                    transferProof: .admin(operator: "test"), source: .signedTransaction,
                    environment: subscribed.environment, transaction: subscribed.notification.transaction!,
                    signedTransactionInfo: "signed"), receivedAt: nil)
            // An app user named "1000" (the purchase's originalTransactionId), and another purchase: not this one's.
            try await self.record("1000", kind: "appUserId", consented: true, client: client)
            try await self.record("2000", kind: "originalTransactionId", consented: true, client: client)
            _ = try await repository.apply(
                VerifiedRecords.step("CONSUMPTION_REQUEST", original: "1000", day: 5, expiresDay: 30), receivedAt: nil)
            #expect(try await self.consent("1000", client: client) == .some(nil), "no facts of this purchase's")

            // Its bound app user's facts, resolved through the binding, answer a later request.
            try await self.record("user-7", kind: "appUserId", consented: false, client: client)
            _ = try await repository.apply(
                VerifiedRecords.step("CONSUMPTION_REQUEST", original: "1000", day: 100, expiresDay: 130),
                receivedAt: nil)
            #expect(try await self.consent("1000", client: client) == .some(false), "the bound app user's facts")
            try await self.record("1000", kind: "originalTransactionId", consented: true, client: client)
            _ = try await repository.apply(
                VerifiedRecords.step("CONSUMPTION_REQUEST", original: "1000", day: 200, expiresDay: 230),
                receivedAt: nil)
            #expect(
                try await self.consent("1000", client: client) == .some(false),
                "both match; the app user's row comes first and the purchase's fills what it leaves empty")
        }
    }
}
