import AppStoreModels
import EntitlementDecisions
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

/// Notifications applied to a real PostgreSQL: once per notificationUUID, stale-safe per subject, and life
/// cycles that end in the same state whatever order and duplication they arrive in.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct EntitlementRepositoryTests {
    let logger: Logger = {
        var logger = Logger(label: "repository-test")
        logger.logLevel = .error
        return logger
    }()

    static let day = VerifiedRecords.day
    static let start = VerifiedRecords.start

    /// One step of a life cycle (see ``VerifiedRecords/step``); subscription `sub-1` unless told.
    static func step(
        _ type: String, _ subtype: String? = nil, day: Int64, original: String = "sub-1",
        product: ProductType = .autoRenewableSubscription,
        status: Status? = nil, expiresDay: Int64? = nil, ownership: InAppOwnershipType = .purchased,
        refundedTransaction: Int64? = nil
    ) -> VerifiedNotificationRecord {
        VerifiedRecords.step(
            type, subtype, original: original, day: day, expiresDay: expiresDay, product: product, ownership: ownership,
            status: status, transactionDay: refundedTransaction)
    }

    /// purchase → renewals → billing retry → grace → recovery → refund of an old period → expiry.
    static let subscription: [VerifiedNotificationRecord] = [
        step("SUBSCRIBED", "INITIAL_BUY", day: 0, expiresDay: 30),
        step("DID_RENEW", day: 30, expiresDay: 60),
        step("DID_RENEW", day: 60, expiresDay: 90),
        step("DID_FAIL_TO_RENEW", day: 90, expiresDay: 90),
        step("DID_FAIL_TO_RENEW", "GRACE_PERIOD", day: 91, expiresDay: 90),
        step("DID_RENEW", "BILLING_RECOVERY", day: 95, expiresDay: 125),
        step("REFUND", day: 100, status: .active, expiresDay: 60, refundedTransaction: 30),
        step("EXPIRED", "VOLUNTARY", day: 125, expiresDay: 125),
    ]
    /// family sharing gained, then revoked.
    static let family: [VerifiedNotificationRecord] = [
        step("SUBSCRIBED", "INITIAL_BUY", day: 0, original: "fam-1", expiresDay: 30, ownership: .familyShared),
        step("DID_RENEW", day: 30, original: "fam-1", expiresDay: 60, ownership: .familyShared),
        step("REVOKE", day: 40, original: "fam-1", expiresDay: 60, ownership: .familyShared),
    ]
    /// a one-time purchase refunded, then the refund reversed.
    static let oneTime: [VerifiedNotificationRecord] = [
        step("ONE_TIME_CHARGE", day: 0, original: "life-1", product: .nonConsumable),
        step("REFUND", day: 5, original: "life-1", product: .nonConsumable, refundedTransaction: 0),
        step("REFUND_REVERSED", day: 9, original: "life-1", product: .nonConsumable, refundedTransaction: 0),
    ]

    /// Migrates a fresh database and applies records in order; returns each result.
    func applyAll(_ records: [VerifiedNotificationRecord], client: PostgresClient) async throws -> [ApplyResult] {
        let repository = EntitlementRepository(client: client, logger: logger)
        var results: [ApplyResult] = []
        for record in records {
            results.append(try await repository.apply(record, receivedAt: nil))
        }
        return results
    }

    /// The entitlements table, as comparable tuples.
    func entitlements(_ client: PostgresClient) async throws -> [String] {
        var rows: [String] = []
        let query = try await client.query(
            """
            SELECT customer, product_id, active, source_transaction_id, valid_until, revoked_at FROM entitlements ORDER BY customer, product_id
            """, logger: logger)
        for try await row in query.decode((String, String, Bool, String, Int64?, Int64?).self) { rows.append("\(row)") }
        return rows
    }

    func count(_ table: String, _ client: PostgresClient) async throws -> Int {
        var count = 0
        for try await value in try await client.query("SELECT count(*) FROM \(unescaped: table)", logger: logger)
            .decode(Int.self)
        { count = value }
        return count
    }

    /// Runs `body` against a freshly migrated database.
    func withDatabase<T: Sendable>(_ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        try await withMigratedDatabase(logger: logger) { client, url in
            return try await body(client)
        }
    }

    @Test func aDuplicateChangesNothingAndAnOlderNotificationIsOnlyLogged() async throws {
        try await withDatabase { client in
            let results = try await applyAll(
                [Self.subscription[0], Self.subscription[1], Self.subscription[1], Self.subscription[0]], client: client
            )
            #expect(results == [.recorded(.applied), .recorded(.applied), .duplicate, .duplicate])
            let stale = Self.step("DID_RENEW", day: 20, expiresDay: 50)
            #expect(try await applyAll([stale], client: client) == [.recorded(.stale)])
            #expect(try await count("notification_log", client) == 3)
            #expect(try await entitlements(client).count == 1)
            #expect(try await entitlements(client)[0].contains("sub-1-t30"), "the newer renewal still stands")
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5])
    func lifeCyclesEndInTheSameStateShuffledAndDuplicated(seed: UInt64) async throws {
        let all = Self.subscription + Self.family + Self.oneTime
        let expected = try await withDatabase { client in
            _ = try await applyAll(all, client: client)
            return try await entitlements(client)
        }
        #expect(expected.count == 3)
        #expect(
            expected.contains { $0.hasPrefix("(\"sub-1\"") && $0.contains("false") }, "the subscription ended expired")
        #expect(expected.contains { $0.hasPrefix("(\"fam-1\"") && $0.contains("false") }, "family access revoked")
        #expect(
            expected.contains { $0.hasPrefix("(\"life-1\"") && $0.contains("true") }, "refund reversed: active again")
        var generator = SeededGenerator(seed: seed)
        let delivered = (all + all.shuffled(using: &generator).prefix(6)).shuffled(using: &generator)
        let (shuffled, logged) = try await withDatabase { client in
            let results = try await applyAll(delivered, client: client)
            #expect(results.filter { $0 == .duplicate }.count == delivered.count - all.count)
            return (try await entitlements(client), try await count("notification_log", client))
        }
        #expect(shuffled == expected)
        #expect(logged == all.count, "each notification logged once")
    }

    /// Everything the updater writes, as comparable text: entitlements, the log's outcomes, the outbox in order per
    /// topic and key (the order consumers see; inputs of different subjects in one batch may interleave).
    func written(_ client: PostgresClient) async throws -> [String] {
        var rows = try await entitlements(client)
        for try await row in try await client.query(
            "SELECT notification_uuid, outcome, duplicates FROM notification_log ORDER BY notification_uuid",
            logger: logger
        ).decode((String, String, Int32).self) { rows.append("\(row)") }
        for try await row in try await client.query(
            "SELECT event_id, topic, key, payload::text FROM outbox ORDER BY topic, key, id", logger: logger
        )
        .decode((String, String, String, String).self) { rows.append("\(row)") }
        return rows
    }

    @Test(arguments: [1, 2, 3])
    func aBatchInOneTransactionEndsExactlyLikeOneAtATime(seed: UInt64) async throws {
        let all = Self.subscription + Self.family + Self.oneTime
        var generator = SeededGenerator(seed: seed)
        // Interleaved subjects, each in its own order, with repeats (inside one batch and across batches).
        let delivered = (all + all.shuffled(using: &generator).prefix(6)).shuffled(using: &generator)
        let (oneAtATime, expected) = try await withDatabase { client in
            (try await applyAll(delivered, client: client), try await written(client))
        }
        let (batched, actual) = try await withDatabase { client in
            let repository = EntitlementRepository(client: client, logger: logger)
            var results: [ApplyResult] = []
            for start in stride(from: 0, to: delivered.count, by: 5) {
                let batch = delivered[start..<min(start + 5, delivered.count)].map {
                    EntitlementInput(.notification($0), receivedAt: nil)
                }
                results += try await repository.apply(batch)
            }
            return (results, try await written(client))
        }
        #expect(batched == oneAtATime)
        #expect(actual == expected)
        #expect(expected.count > all.count + 3, "log rows, outbox rows and entitlements compared")
    }

    /// The facts statement numbers each subject's events and writes the number as the first member of the event's
    /// JSON (it receives each payload without its opening `{`): in batches, every subject's events are 1, 2, 3, …
    /// in the order they were written, the JSON holds the row's number, and the rest of it is the event as planned.
    @Test func eachSubjectsEventsAreNumberedInTheirJSONInOrder() async throws {
        let all = Self.subscription + Self.family + Self.oneTime
        var generator = SeededGenerator(seed: 7)
        let delivered = all.shuffled(using: &generator)
        let rows = try await withDatabase { client in
            let repository = EntitlementRepository(client: client, logger: logger)
            for start in stride(from: 0, to: delivered.count, by: 5) {
                _ = try await repository.apply(
                    delivered[start..<min(start + 5, delivered.count)].map {
                        EntitlementInput(.notification($0), receivedAt: nil)
                    })
            }
            var rows: [(subject: String, sequence: Int64, text: String)] = []
            for try await row in try await client.query(
                "SELECT payload->>'subject', sequence, payload::text FROM outbox WHERE sequence IS NOT NULL ORDER BY id",
                logger: logger
            ).decode((String, Int64, String).self) { rows.append(row) }
            return rows
        }
        #expect(Set(rows.map(\.subject)).count >= 3, "events of several subjects: \(rows.map(\.subject))")
        for subject in Set(rows.map(\.subject)) {
            let numbers = rows.filter { $0.subject == subject }.map(\.sequence)
            #expect(numbers == Array(1...Int64(numbers.count)), "\(subject): \(numbers)")
        }
        for row in rows {
            #expect(row.text.hasPrefix(#"{"sequence":\#(row.sequence),"#), "\(row.text.prefix(40))")
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(row.text.utf8)) as? [String: Any], "valid JSON")
            #expect(json["sequence"] as? Int == Int(row.sequence) && json["eventType"] is String)
        }
    }

    @Test func aFailingInputLeavesNothingOfItsBatchCommitted() async throws {
        try await withDatabase { client in
            try await client.query(
                """
                CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN IF NEW.notification_uuid LIKE 'life-1-REFUND-%' THEN RAISE EXCEPTION 'poison'; END IF; RETURN NEW; END $$
                """, logger: logger)
            try await client.query(
                "CREATE TRIGGER poison BEFORE INSERT ON notification_log FOR EACH ROW EXECUTE FUNCTION refuse_poison()",
                logger: logger)
            let repository = EntitlementRepository(client: client, logger: logger)
            let batch = (Self.subscription.prefix(2) + Self.oneTime).map {
                EntitlementInput(.notification($0), receivedAt: nil)
            }
            await #expect(throws: (any Error).self) { try await repository.apply(batch) }
            #expect(
                try await count("notification_log", client) == 0,
                "the inputs before the failing one were rolled back too")
            #expect(try await count("outbox", client) == 0)
            #expect(try await count("entitlements", client) == 0)
            try await client.query("DROP TRIGGER poison ON notification_log", logger: logger)
            let results = try await repository.apply(batch)
            #expect(
                results == Array(repeating: .recorded(.applied), count: 5), "the retried batch applies each input once")
            #expect(try await count("notification_log", client) == 5)
        }
    }

    @Test func anUpgradeEndsThePreviousProductsRow() async throws {
        try await withDatabase { client in
            var basic = Self.step("SUBSCRIBED", "INITIAL_BUY", day: 0, expiresDay: 30)
            basic.notification.transaction?.productId = "basic"
            let upgrade = Self.step("DID_CHANGE_RENEWAL_PREF", "UPGRADE", day: 10, expiresDay: 40)
            _ = try await applyAll([basic, upgrade], client: client)
            let rows = try await entitlements(client)
            #expect(rows.count == 2)
            #expect(rows.contains { $0.contains("\"basic\", false") }, "the previous product ended: \(rows)")
            #expect(rows.contains { $0.contains("\"pro\", true") }, "the new product active: \(rows)")
        }
    }

    /// The change events in the outbox, in order.
    func changeEvents(_ client: PostgresClient) async throws -> [String] {
        var events: [String] = []
        for try await type in try await client.query(
            "SELECT payload->>'eventType' FROM outbox WHERE topic = \(PipelineTopics().entitlementChanges) ORDER BY id",
            logger: logger
        ).decode(String.self) { events.append(type) }
        return events
    }

    @Test func anUpgradeARenewalAndARefundInOneBatchEndLikeOneAtATime() async throws {
        // One transaction writes both product rows of the subject: the refund must read the newest (the new
        // product's), as it does one at a time, and revoke it.
        var basic = Self.step("SUBSCRIBED", "INITIAL_BUY", day: 0, expiresDay: 30)
        basic.notification.transaction?.productId = "basic"
        let life = [
            basic, Self.step("DID_CHANGE_RENEWAL_PREF", "UPGRADE", day: 10, expiresDay: 40),
            Self.step("DID_RENEW", day: 40, expiresDay: 70),
            Self.step("REFUND", day: 45, status: .revoked, expiresDay: 70, refundedTransaction: 40),
        ]
        let expected = try await withDatabase { client in
            _ = try await applyAll(life, client: client)
            return (try await written(client), try await changeEvents(client))
        }
        let actual = try await withDatabase { client in
            let results = try await EntitlementRepository(client: client, logger: logger)
                .apply(life.map { EntitlementInput(.notification($0), receivedAt: nil) })
            #expect(results == Array(repeating: .recorded(.applied), count: 4))
            return (try await written(client), try await changeEvents(client))
        }
        #expect(actual.0 == expected.0)
        #expect(actual.1 == expected.1)
        #expect(
            actual.1.last == "entitlement.revoked",
            "the refund of the latest period revoked the new product: \(actual.1)")
    }

    @Test func aRevocationKnownBeforeThePurchaseIsPublishedAsARevocation() async throws {
        // After an outage the revoking status can come first; the purchase's own notifications then stay stale.
        try await withDatabase { client in
            let refund = Self.step("REFUND", day: 45, status: .revoked, expiresDay: 60, refundedTransaction: 30)
            let results = try await applyAll([refund, Self.subscription[0], Self.subscription[1]], client: client)
            #expect(results == [.recorded(.applied), .recorded(.stale), .recorded(.stale)])
            #expect(try await changeEvents(client) == ["entitlement.revoked"])
            let rows = try await entitlements(client)
            #expect(
                rows.count == 1 && rows[0].contains("\"pro\", false"), "revoked, and nothing stale moved it: \(rows)")
        }
    }

    @Test func theOperatorViewShowsStateSubscriptionAndHistory() async throws {
        try await withDatabase { client in
            _ = try await applyAll(Self.subscription, client: client)
            let view = try await EntitlementQueries(client: client, logger: logger).describe("sub-1")
            #expect(view["entitlements"]?.count == 1)
            #expect(view["entitlements"]?.first?["active"] == "false")
            let subscription = try #require(view["subscriptions"]?.first)
            #expect(subscription["expiresDate"] == String(Self.start + 125 * Self.day))
            #expect(subscription["status"] == "1", "the last data.status seen (the refund's) is kept")
            #expect(
                view["history"]?.map { $0["notificationType"] ?? "" }
                    == [
                        "SUBSCRIBED", "DID_RENEW", "DID_RENEW", "DID_FAIL_TO_RENEW", "DID_FAIL_TO_RENEW", "DID_RENEW",
                        "REFUND", "EXPIRED",
                    ])
            #expect(
                try await EntitlementQueries(client: client, logger: logger).describe("nobody")["entitlements"]?.isEmpty
                    == true)
        }
    }

    @Test func theOutboxAndStatusRequestsAreWrittenWithTheChange() async throws {
        try await withDatabase { client in
            let ambiguous = Self.step("REFUND", day: 40, expiresDay: 60, refundedTransaction: 30)
            _ = try await applyAll([Self.subscription[0], Self.subscription[1], ambiguous, ambiguous], client: client)
            #expect(try await count("status_requests", client) == 1)
            var rows: [(String, String?)] = []
            for try await row in try await client.query(
                "SELECT topic, payload->>'eventType' FROM outbox ORDER BY id", logger: logger
            )
            .decode((String, String?).self) { rows.append(row) }
            #expect(rows.map(\.1) == ["entitlement.granted", "entitlement.updated", "revocation.refunded", nil])
            // The status request goes out through the outbox too, keyed by the subscription, once.
            #expect(rows.last?.0 == PipelineTopics().statusRequests)
            var keys: [String] = []
            for try await key in try await client.query(
                "SELECT key FROM outbox WHERE topic = \(PipelineTopics().statusRequests)", logger: logger
            )
            .decode(String.self) { keys.append(key) }
            #expect(
                keys == ["Sandbox/com.example.app/\(ambiguous.subject)"],
                "keyed by the subscription within its environment and app")
        }
    }
}
