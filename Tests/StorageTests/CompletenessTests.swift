import AppStoreModels
import Entitlements
import Foundation
import JWSVerification
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import TestSupport
import Testing

@testable import Storage

/// Nothing below ingest is thrown away: late (stale) notifications still store their transaction and renewal
/// info and publish their facts once; Sandbox and Production never touch each other's rows; version 2
/// databases are carried over to the environment-and-app identity.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct CompletenessTests {
    let logger: Logger = {
        var logger = Logger(label: "completeness-test")
        logger.logLevel = .error
        return logger
    }()
    typealias R = EntitlementRepositoryTests

    /// A subscription's life with every refund-like notification: an old period refunded (with data.status), the
    /// refund reversed, a refund declined, a consumption request, and a lifetime purchase refunded.
    static let life: [VerifiedNotificationRecord] =
        R.subscription + [
            R.step("CONSUMPTION_REQUEST", day: 96, status: .active, expiresDay: 60, refundedTransaction: 30),
            R.step("REFUND_DECLINED", day: 97, status: .active, expiresDay: 125, refundedTransaction: 95),
            R.step("REFUND_REVERSED", day: 110, status: .active, expiresDay: 60, refundedTransaction: 30),
        ] + R.oneTime + R.family

    static let refundLike: Set<String> = ["REFUND", "REFUND_REVERSED", "REVOKE", "REFUND_DECLINED"]

    /// Every value of a one-column query.
    func column<T: PostgresDecodable & Sendable>(_ query: PostgresQuery, _ client: PostgresClient, as type: T.Type)
        async throws
        -> [T]
    {
        var result: [T] = []
        for try await value in try await client.query(query, logger: logger).decode(T.self) { result.append(value) }
        return result
    }

    /// Every row of a query, decoded as the given columns.
    func rows<each Column: PostgresDecodable & Sendable>(
        _ query: PostgresQuery, _ client: PostgresClient, as type: (repeat each Column).Type
    )
        async throws -> [(repeat each Column)]
    {
        var result: [(repeat each Column)] = []
        for try await row in try await client.query(query, logger: logger).decode(type) { result.append(row) }
        return result
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func shuffledDeliveryKeepsEveryTransactionAndOneRevocationEventPerRefund(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed)
        let delivered = (Self.life + Self.life.shuffled(using: &generator).prefix(5)).shuffled(using: &generator)
        try await R().withDatabase { client in
            let results = try await R().applyAll(delivered, client: client)
            #expect(results.contains(.recorded(.stale)), "the shuffle made some notifications late")
            let carried = Set(Self.life.compactMap { $0.notification.transaction?.transactionId })
            let stored = Set(try await column("SELECT transaction_id FROM transactions", client, as: String.self))
            #expect(stored == carried, "every carried transaction is a row, stale or not")
            // The newest signed version of a transaction stands: t30 was refunded (day 100) and the refund reversed
            // (day 110); older notifications carrying t30 unrevoked never overwrite the reversal's version.
            let t30 = try await rows(
                "SELECT signed_date, revocation_date FROM transactions WHERE transaction_id = 'sub-1-t30'", client,
                as: (Int64, Int64?).self)
            #expect(t30.first?.0 == R.start + 110 * R.day, "the newest signed version of sub-1-t30 is stored")
            let renewal = try await column(
                "SELECT signed_date FROM renewal_infos WHERE original_transaction_id = 'sub-1'", client, as: Int64.self)
            #expect(renewal == [R.start + 125 * R.day], "the newest renewal info is stored")
            // Exactly one revocation-stream event per refund-like notification, whatever the order.
            let revocations = try await rows(
                """
                SELECT payload->'cause'->>'notificationUUID', payload->'cause'->>'notificationType' FROM outbox
                WHERE topic = \(PipelineTopics().entitlementRevocations) AND payload->>'eventType' <> 'consumption.requested'
                """, client, as: (String, String).self)
            let refundUUIDs = Self.life.filter {
                Self.refundLike.contains($0.notification.payload.rawNotificationType ?? "")
            }
            .compactMap(\.notification.payload.notificationUUID)
            #expect(
                revocations.map(\.0).sorted() == refundUUIDs.sorted(),
                "one revocation event per refund-like notification")
            let requests = try await column(
                "SELECT count(*) FROM outbox WHERE payload->>'eventType' = 'consumption.requested'", client,
                as: Int.self)
            #expect(requests == [1])
            let deadline = try await column(
                "SELECT (payload->>'responseDeadline')::bigint - (payload->>'occurredAt')::bigint FROM outbox WHERE payload->>'eventType' = 'consumption.requested'",
                client, as: Int64.self)
            #expect(deadline == [12 * 3_600_000], "the answer is due 12 hours after the request")
        }
    }

    @Test func lateFactsArePublishedOnceAndMarkedOutOfOrderWithoutMovingState() async throws {
        try await R().withDatabase { client in
            let late = R.step("REFUND_DECLINED", day: 20, expiresDay: 30, refundedTransaction: 0)
            let results = try await R().applyAll([R.subscription[0], R.subscription[1], late, late], client: client)
            #expect(results == [.recorded(.applied), .recorded(.applied), .recorded(.stale), .duplicate])
            let events = try await rows(
                "SELECT payload->>'eventType', (payload->>'outOfOrder')::boolean FROM outbox WHERE payload->'cause'->>'notificationUUID' = \(late.notification.payload.notificationUUID!)",
                client, as: (String, Bool).self)
            #expect(events.map(\.0) == ["revocation.refund-declined"] && events.map(\.1) == [true])
            #expect(
                try await R().entitlements(client).first?.contains("sub-1-t30") == true,
                "the entitlement did not move backwards")
        }
    }

    /// A record moved to another environment (and made distinct by its UUID), bought with `token`.
    static func inEnvironment(_ record: VerifiedNotificationRecord, _ environment: Environment, token: String)
        -> VerifiedNotificationRecord
    {
        var record = record
        record.environment = environment.rawValue
        record.notification.payload.data?.environment = environment
        record.notification.payload.notificationUUID! += "-\(environment.rawValue)"
        record.notification.transaction?.environment = environment
        record.notification.transaction?.appAccountToken = token
        return record
    }

    @Test func sandboxAndProductionWithTheSameTokenAndIdsAreIndependent() async throws {
        let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        let production = [R.subscription[0], R.subscription[1]].map {
            Self.inEnvironment($0, .production, token: token)
        }
        // The same original transaction id, product and token in Sandbox: bought, then expired and refunded there.
        let sandbox = [
            R.subscription[0], R.step("EXPIRED", "VOLUNTARY", day: 40, expiresDay: 60),
            R.step("REFUND", day: 41, status: .revoked, expiresDay: 60, refundedTransaction: 30),
        ]
        .map { Self.inEnvironment($0, .sandbox, token: token) }
        try await R().withDatabase { client in
            let results = try await R().applyAll(production + sandbox, client: client)
            #expect(
                !results.contains(.recorded(.stale)), "Sandbox's notifications are not ordered against Production's")
            let rows = try await rows(
                "SELECT environment, customer, product_id, active, revoked_at FROM entitlements ORDER BY environment",
                client, as: (String, String, String, Bool, Int64?).self)
            #expect(rows.count == 2, "two independent entitlements")
            #expect(rows.map(\.0) == ["Production", "Sandbox"] && rows.allSatisfy { $0.1 == token && $0.2 == "pro" })
            #expect(
                rows.first?.3 == true && rows.first?.4 == nil, "the Sandbox EXPIRED and REFUND left Production active")
            #expect(rows.last?.3 == false && rows.last?.4 != nil, "Sandbox's own row is revoked")
            let transactions = try await self.column(
                "SELECT environment FROM transactions WHERE transaction_id = 'sub-1-t0' ORDER BY environment",
                client, as: String.self)
            #expect(transactions == ["Production", "Sandbox"], "the same transaction id is two rows")
            let keys = Set(try await self.column("SELECT key FROM outbox", client, as: String.self))
            #expect(
                keys == ["Production/com.example.app/\(token)", "Sandbox/com.example.app/\(token)"],
                "events keyed per environment and app")
        }
    }

    @Test func aVersionTwoDatabaseIsCarriedOver() async throws {
        try await withLocalPostgres { url in
            try await DatabaseClient.with(try DatabaseSettings(url: url), logger: logger) { client in
                try await MigrationRunner(migrations: [InitialSchema(), SubjectOrdering()]).migrate(
                    client: client, logger: logger)
                try await client.query(
                    """
                    INSERT INTO transactions (transaction_id, original_transaction_id, bundle_id, product_id, environment, signed_date)
                    VALUES ('t-1', 'o-1', 'com.example.app', 'pro', 'Production', 1)
                    """, logger: logger)
                try await client.query(
                    """
                    INSERT INTO entitlements (customer, product_id, active, original_transaction_id, source_transaction_id, ownership_type, last_signed_date)
                    VALUES ('o-1', 'pro', true, 'o-1', 't-1', 'PURCHASED', 1)
                    """, logger: logger)
                try await client.query(
                    """
                    INSERT INTO subscriptions (original_transaction_id, customer, product_id, environment, last_signed_date)
                    VALUES ('o-1', 'o-1', 'pro', 'Production', 1)
                    """, logger: logger)
                try await client.query(
                    """
                    INSERT INTO notification_log (notification_uuid, notification_type, subject, environment, signed_date, outcome)
                    VALUES ('n-1', 'SUBSCRIBED', 'o-1', 'Production', 1, 'applied'), ('n-2', 'TEST', 'com.example.app:n-2', 'Production', 2, 'ignored')
                    """, logger: logger)
                #expect(
                    try await MigrationRunner().migrate(client: client, logger: logger)
                        == Array(3...Migrations.all.count))
                let entitlement = try await rows(
                    "SELECT environment, bundle_id, entitlement_id FROM entitlements", client,
                    as: (String, String, String).self)
                #expect(entitlement.map { "\($0.0) \($0.1) \($0.2)" } == ["Production com.example.app pro"])
                let subscription = try await column("SELECT bundle_id FROM subscriptions", client, as: String.self)
                #expect(subscription == ["com.example.app"])
                let log = try await column(
                    "SELECT bundle_id FROM notification_log ORDER BY notification_uuid", client, as: String.self)
                #expect(
                    log == ["com.example.app", "com.example.app"], "app-level rows take the app from their subject")
                // The new keys hold: the same customer and product in Sandbox is another row.
                try await client.query(
                    """
                    INSERT INTO entitlements (environment, bundle_id, customer, product_id, entitlement_id, active, original_transaction_id,
                                              source_transaction_id, ownership_type, last_signed_date)
                    VALUES ('Sandbox', 'com.example.app', 'o-1', 'pro', 'pro', false, 'o-1', 't-1', 'PURCHASED', 1)
                    """, logger: logger)
                #expect(try await column("SELECT count(*) FROM entitlements", client, as: Int.self) == [2])
            }
        }
    }
}
