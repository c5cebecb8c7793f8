import AppStoreModels
import Crypto
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

/// Who a purchase belongs to, in a real PostgreSQL written by the updater's repository: an app user bound by
/// a posted purchase owns the subscription's later notifications; a refused claim changes nothing; an
/// appAccountToken appearing later moves the rows once, and nothing stays active under two customers.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct CustomerBindingTests {
    let logger: Logger = {
        var logger = Logger(label: "binding-test")
        logger.logLevel = .error
        return logger
    }()

    /// A purchase the app posted for `user`: the transaction of `record`, signed at its notification's time.
    static func posted(
        _ record: VerifiedNotificationRecord, user: String, policy: AppPurchaseRecord.ConflictPolicy = .refuse,
        proof: TransferProof? = nil, request: String = "req-1"
    ) -> AppPurchaseRecord {
        AppPurchaseRecord(
            requestId: request, appUserId: user, onConflict: policy, transferProof: proof, source: .signedTransaction,
            environment: record.environment, transaction: record.notification.transaction!,
            signedTransactionInfo: "signed")
    }

    /// Declares `token` as `user`'s, as customer-api's account-tokens route does.
    static func declare(_ token: String, for user: String, client: PostgresClient, logger: Logger) async throws
        -> AccountTokenOwners.Declared
    {
        try await AccountTokenOwners(client: client, logger: logger).declare(
            token: token, appUserId: user, environment: "Sandbox",
            bundleId: "com.example.app", keyId: "test-key")
    }

    /// (customer, active) of every entitlement row of `original`, and the binding.
    func rows(_ original: String, client: PostgresClient) async throws -> (rows: [String: Bool], boundTo: String?) {
        var rows: [String: Bool] = [:]
        for try await (customer, active) in try await client.query(
            "SELECT customer, active FROM entitlements WHERE original_transaction_id = \(original)", logger: logger
        ).decode((String, Bool).self) {
            rows[customer] = active
        }
        var bound: String?
        for try await user in try await client.query(
            "SELECT app_user_id FROM customer_bindings WHERE original_transaction_id = \(original)", logger: logger
        ).decode(String.self) {
            bound = user
        }
        return (rows, bound)
    }

    /// Runs `body` with a migrated PostgreSQL, the updater's repository on it and the default topics.
    func withRepository(_ body: @Sendable (PostgresClient, EntitlementRepository, PipelineTopics) async throws -> Void)
        async throws
    {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, url in
            try await body(client, EntitlementRepository(client: client, logger: logger), PipelineTopics())
        }
    }

    /// The `previousCustomer → customer` of every customer-changed event in the outbox.
    func moves(client: PostgresClient) async throws -> [String] {
        var moves: [String] = []
        for try await (from, to) in try await client.query(
            """
            SELECT payload->>'previousCustomer', payload->>'customer' FROM outbox
            WHERE payload->>'eventType' = 'entitlement.customer-changed' ORDER BY id
            """, logger: logger
        ).decode((String, String).self) {
            moves.append("\(from) → \(to)")
        }
        return moves
    }

    @Test func aBoundAppUserOwnsLaterNotificationsAndARefusedClaimChangesNothing() async throws {
        let logger = self.logger
        try await self.withRepository { client, repository, topics in
            let subscribed = VerifiedRecords.step(
                "SUBSCRIBED", "INITIAL_BUY", original: "sub-1", day: 0, expiresDay: 30)
            _ = try await repository.apply(subscribed, receivedAt: nil)
            #expect(
                try await self.rows("sub-1", client: client).rows == ["sub-1": true],
                "no token: keyed by originalTransactionId")

            // Nobody owns it and nothing tokens it: a bare claim (an id, a receipt, an old signed transaction) binds
            // nothing; a claim with proof (here an operator's word) binds it.
            let bare = Self.posted(subscribed, user: "stranger", request: "bare")
            #expect(try await repository.apply(bare, receivedAt: nil) == .recorded(.conflict))
            #expect(try await self.rows("sub-1", client: client) == (["sub-1": true], nil), "nothing bound")
            let claim = Self.posted(subscribed, user: "user-1", proof: .admin(operator: "onboarding"))
            #expect(try await repository.apply(claim, receivedAt: nil) == .recorded(.applied))
            #expect(
                try await self.rows("sub-1", client: client) == (["user-1": true], "user-1"),
                "the rows moved to the app user")
            #expect(try await repository.apply(claim, receivedAt: nil) == .duplicate)

            _ = try await repository.apply(
                VerifiedRecords.step("DID_RENEW", original: "sub-1", day: 30, expiresDay: 60), receivedAt: nil)
            _ = try await repository.apply(
                VerifiedRecords.step("EXPIRED", "VOLUNTARY", original: "sub-1", day: 60, expiresDay: 60),
                receivedAt: nil)
            #expect(
                try await self.rows("sub-1", client: client) == (["user-1": false], "user-1"),
                "later notifications land on the app user")

            let refused = Self.posted(subscribed, user: "user-2", request: "req-2")
            #expect(try await repository.apply(refused, receivedAt: nil) == .recorded(.conflict))
            #expect(
                try await self.rows("sub-1", client: client) == (["user-1": false], "user-1"),
                "a refused claim changes nothing")

            let unproved = Self.posted(subscribed, user: "user-2", policy: .transfer, request: "req-3")
            #expect(
                try await repository.apply(unproved, receivedAt: nil) == .recorded(.conflict),
                "the transfer policy alone moves nothing: a transfer needs proof")
            let transferred = Self.posted(
                subscribed, user: "user-2", policy: .transfer, proof: .admin(operator: "agent-7"), request: "req-4")
            #expect(try await repository.apply(transferred, receivedAt: nil) == .recorded(.applied))
            #expect(try await self.rows("sub-1", client: client) == (["user-2": false], "user-2"))
            #expect(try await self.moves(client: client) == ["sub-1 → user-1", "user-1 → user-2"])
            var proofs: [String?] = []
            for try await proof in try await client.query(
                "SELECT transfer_proof FROM customer_bindings WHERE original_transaction_id = 'sub-1'",
                logger: logger
            ).decode(String?.self) { proofs.append(proof) }
            #expect(proofs == ["admin:agent-7"], "who moved it is recorded")
        }
    }

    @Test func anAppAccountTokenAppearingLaterMovesTheRowsOnce() async throws {
        try await self.withRepository { client, repository, topics in
            _ = try await repository.apply(
                VerifiedRecords.step("SUBSCRIBED", "INITIAL_BUY", original: "sub-2", day: 0, expiresDay: 30),
                receivedAt: nil)
            let token = "5b7a4c38-2f0e-4d5e-9b61-0c8f4f2e9a11"
            var renewed = VerifiedRecords.step("DID_RENEW", original: "sub-2", day: 30, expiresDay: 60)
            renewed.notification.transaction?.appAccountToken = token
            _ = try await repository.apply(renewed, receivedAt: nil)
            #expect(try await self.rows("sub-2", client: client).rows == [token: true], "one row, under the token")
            // A late notification without the token does not move them back.
            var late = VerifiedRecords.step(
                "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", original: "sub-2", day: 10, expiresDay: 30)
            late.notification.transaction?.appAccountToken = nil
            #expect(try await repository.apply(late, receivedAt: nil) == .recorded(.stale))
            #expect(try await self.rows("sub-2", client: client).rows == [token: true])
            #expect(try await self.moves(client: client) == ["sub-2 → \(token)"])
        }
    }

    /// A purchase Apple signed with an appAccountToken belongs to that token: a claim by any app user is refused
    /// (whatever the policy, without proof) and the owner keeps access; once the app team declares the token for an
    /// app user, that user's claim binds it, and a second, conflicting declaration is refused.
    @Test func aTokenOwnedPurchaseIsClaimedOnlyByTheUserTheTokenWasDeclaredFor() async throws {
        let logger = self.logger
        try await self.withRepository { client, repository, topics in
            let token = "0f6f2a4e-8d1c-4b7a-a3e2-6c1d9b5e7f20"
            var subscribed = VerifiedRecords.step(
                "SUBSCRIBED", "INITIAL_BUY", original: "sub-3", day: 0, expiresDay: 30)
            subscribed.notification.transaction?.appAccountToken = token
            _ = try await repository.apply(subscribed, receivedAt: nil)
            #expect(try await self.rows("sub-3", client: client) == ([token: true], nil))

            // The stranger posts the owner's transaction (its token in it), and the same transaction with the token
            // stripped (as an id look-up of an older period might come back): both refused, under either policy.
            var stripped = subscribed
            stripped.notification.transaction?.appAccountToken = nil
            for (index, (record, policy)) in [
                (subscribed, AppPurchaseRecord.ConflictPolicy.refuse), (stripped, .transfer),
            ].enumerated() {
                let claim = Self.posted(record, user: "stranger", policy: policy, request: "steal-\(index)")
                #expect(try await repository.apply(claim, receivedAt: nil) == .recorded(.conflict))
                #expect(try await self.rows("sub-3", client: client) == ([token: true], nil), "the owner keeps access")
            }
            // The owner before the declaration: refused too (nobody may claim a token nobody declared).
            #expect(
                try await repository.apply(
                    Self.posted(subscribed, user: "owner", request: "early"), receivedAt: nil)
                    == .recorded(.conflict))

            #expect(try await Self.declare(token, for: "owner", client: client, logger: logger) == .created)
            #expect(try await Self.declare(token, for: "owner", client: client, logger: logger) == .unchanged)
            #expect(try await Self.declare(token, for: "stranger", client: client, logger: logger) == .conflict)
            #expect(
                try await repository.apply(
                    Self.posted(subscribed, user: "stranger", request: "steal-2"), receivedAt: nil)
                    == .recorded(.conflict), "declared for another user")
            #expect(
                try await repository.apply(
                    Self.posted(subscribed, user: "owner", request: "claim"), receivedAt: nil)
                    == .recorded(.applied))
            #expect(try await self.rows("sub-3", client: client) == (["owner": true], "owner"))
            #expect(try await self.moves(client: client) == ["\(token) → owner"])
        }
    }

    /// A device's proof moves a purchase only when its hash matches the transaction: the updater checks it again,
    /// so a record whose proof does not hold is refused even under the transfer policy.
    @Test func aDeviceProofMovesAPurchaseOnlyWhenItsHashMatches() async throws {
        try await self.withRepository { client, repository, topics in
            var subscribed = VerifiedRecords.step(
                "SUBSCRIBED", "INITIAL_BUY", original: "sub-4", day: 0, expiresDay: 30)
            let device = "9e2d7c1a-5b3f-4e8d-a6c2-1f0b8d4e3a57", nonce = "3c8e1f6a-7d2b-4a9e-b5c1-8e0f2d6a4b93"
            subscribed.notification.transaction?.deviceVerificationNonce = nonce
            subscribed.notification.transaction?.deviceVerification = Data(
                SHA384.hash(data: Data((nonce + device).utf8))
            ).base64EncodedString()
            _ = try await repository.apply(subscribed, receivedAt: nil)
            #expect(
                try await repository.apply(
                    Self.posted(subscribed, user: "first", proof: .device(verificationId: device)), receivedAt: nil)
                    == .recorded(.applied))
            let wrong = Self.posted(
                subscribed, user: "second", policy: .transfer, proof: .device(verificationId: nonce), request: "wrong")
            #expect(try await repository.apply(wrong, receivedAt: nil) == .recorded(.conflict))
            #expect(try await self.rows("sub-4", client: client).boundTo == "first")
            let right = Self.posted(
                subscribed, user: "second", policy: .transfer, proof: .device(verificationId: device.uppercased()),
                request: "right")
            #expect(try await repository.apply(right, receivedAt: nil) == .recorded(.applied))
            #expect(try await self.rows("sub-4", client: client) == (["second": true], "second"))
            #expect(try await self.moves(client: client).last == "first → second")
        }
    }
}
