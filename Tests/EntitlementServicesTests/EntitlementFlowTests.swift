import AppStoreModels
import Entitlements
import Foundation
import JWSVerification
import Logging
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
import Storage
import TestSupport
import Testing

/// The updater and the publisher together, against a real broker and a real PostgreSQL: verified
/// notifications become entitlement rows and, through the outbox, downstream events keyed by customer.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(4))) struct EntitlementFlowTests {
    /// A verified record of subscription `original`, the `day`-th day of its life.
    static func record(
        _ type: String, _ subtype: String? = nil, original: String, day: Int64, expiresDay: Int64,
        ownership: InAppOwnershipType = .purchased, status: Status? = nil
    ) -> VerifiedNotificationRecord {
        VerifiedRecords.step(
            type, subtype, original: original, day: day, expiresDay: expiresDay, ownership: ownership, status: status)
    }

    @Test func verifiedNotificationsBecomeRowsAndOrderedEventsKeyedByCustomer() async throws {
        try await withLocalBroker { bootstrap in
            try await withLocalPostgres { url in
                let logger: Logger = {
                    var logger = Logger(label: "entitlement-flow")
                    logger.logLevel = .error
                    return logger
                }()
                let topics = PipelineTopics()
                let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
                try await kafka.createTopics(topics.all.map { ($0, 2) })
                var records: [VerifiedNotificationRecord] = []
                for customer in 0..<10 {
                    let original = "sub-\(customer)"
                    records.append(Self.record("SUBSCRIBED", "INITIAL_BUY", original: original, day: 0, expiresDay: 30))
                    records.append(Self.record("DID_RENEW", original: original, day: 30, expiresDay: 60))
                    records.append(Self.record("EXPIRED", "VOLUNTARY", original: original, day: 60, expiresDay: 60))
                }
                records.append(
                    Self.record(
                        "SUBSCRIBED", "INITIAL_BUY", original: "fam-1", day: 0, expiresDay: 30, ownership: .familyShared
                    ))
                records.append(
                    Self.record("REVOKE", original: "fam-1", day: 10, expiresDay: 30, ownership: .familyShared))
                let signing = TestRecordSigning.signer(.chainVerifier)
                var raw = try records.map {
                    signing.sign(
                        ProducerRecord(topic: topics.verified, key: Array($0.subject.utf8), value: try $0.encoded()))
                }
                raw += raw.prefix(5)  // redelivered duplicates
                raw.append(
                    signing.sign(
                        ProducerRecord(topic: topics.verified, key: Array("junk".utf8), value: Array("{}".utf8))))
                raw += try Self.forgeries(of: records[0], signedAs: raw[0], topics: topics)
                try await kafka.produce(raw)

                // The updater and the publisher as processes of their binaries; the records are built here, not
                // Apple-signed, so the updater's check of Apple's signature is off.
                try await migrateDatabase(try DatabaseSettings(url: url), logger: logger)
                let fleet = try ServiceFleet(
                    environment: [
                        "DATABASE_URL": url, "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "KAFKA_SESSION_TIMEOUT_MS": "6000",
                        "UPDATER_APPLE_SIGNATURE_CHECK": "off", "LOG_LEVEL": "warning",
                    ],
                    directory: try LocalComponents.temporaryDirectory("entitlement-flow"),
                    only: ["entitlement-updater", "event-publisher"])
                let (changes, family, revocations, rejected) = try await fleet.whileRunning {
                    (
                        try await kafka.readAll(
                            topics.entitlementChanges, atLeast: 32, quiet: .seconds(2), timeout: .seconds(90)),
                        try await kafka.readAll(topics.entitlementFamily, atLeast: 2, quiet: .seconds(1)),
                        try await kafka.readAll(topics.entitlementRevocations, atLeast: 1, quiet: .seconds(1)),
                        try await kafka.readAll(topics.rejected, atLeast: 10, quiet: .seconds(1))
                    )
                }

                let decoder = JSONDecoder()
                let events = try changes.map { try decoder.decode(EntitlementEvent.self, from: Data($0.value ?? [])) }
                #expect(
                    Set(events.map(\.eventId)).count == 32,
                    "granted, updated, expired per subscription; granted, revoked for the family member")
                for (record, event) in zip(changes, events) {
                    #expect(
                        record.key == Array("Sandbox/com.example.app/\(event.customer)".utf8),
                        "keyed by customer within environment and app")
                    #expect(
                        record.header(PipelineHeaders.environment)?.text == "Sandbox"
                            && event.facts.environment == "Sandbox")
                }
                for customer in 0..<10 {
                    let sequence = events.filter { $0.customer == "sub-\(customer)" }.map(\.eventType)
                    let firstSeen = sequence.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
                    #expect(
                        firstSeen == ["entitlement.granted", "entitlement.updated", "entitlement.expired"],
                        "in order for sub-\(customer)")
                }
                #expect(
                    family.map { try? decoder.decode(EntitlementEvent.self, from: Data($0.value ?? [])).eventType }
                        == ["family.access-gained", "family.access-lost"])
                #expect(revocations.count == 1)
                let reasons = rejected.compactMap {
                    try? decoder.decode(RejectedNotificationRecord.self, from: Data($0.value ?? []))
                }
                .map { "\($0.reason): \($0.detail)" }.sorted()
                #expect(
                    reasons.count == 10 && reasons.filter { $0.hasPrefix("unauthenticated") }.count == 9
                        && reasons.first?.hasPrefix("format") == true,
                    "the junk is dead-lettered as a format error, the nine forgeries as unauthenticated: \(reasons)")
                for expected in [
                    "no record-signature or record-producer header", "customer-api may not write appstore.notification",
                    "refund-resolver may not write appstore.app.purchase", "billing-service, a producer this service",
                    "chain-verifier's key test does not match", "customer-api's key test does not match",
                    "signed with chain-verifier's key old",
                ] {
                    #expect(reasons.contains { $0.contains(expected) }, "\(expected) among \(reasons)")
                }
                #expect(
                    reasons.filter { $0.contains("chain-verifier's key test does not match") }.count == 3,
                    "the altered record, customer-api's key passed off as chain-verifier's, and its time moved: \(reasons)"
                )

                try await DatabaseClient.with(try DatabaseSettings(url: url), logger: logger) { client in
                    var active = 0, total = 0, unpublished = -1
                    for try await (isActive) in try await client.query(
                        "SELECT active FROM entitlements", logger: logger
                    ).decode(Bool.self) {
                        total += 1
                        if isActive { active += 1 }
                    }
                    #expect(
                        total == 11 && active == 0,
                        "every subscription expired, the family member revoked; nothing forged granted")
                    var forgedRows = -1
                    for try await count in try await client.query(
                        """
                        SELECT (SELECT count(*) FROM notification_log WHERE subject IN ('forged-1', 'forged-2', 'sub-X'))
                             + (SELECT count(*) FROM customer_bindings)
                             + (SELECT count(*) FROM transactions WHERE original_transaction_id IN ('forged-1', 'forged-2'))
                        """, logger: logger
                    ).decode(Int.self) { forgedRows = count }
                    #expect(forgedRows == 0, "no trace of the forgeries in the entitlement tables")
                    unpublished = try await OutboxRelay(client: client, logger: logger).backlog()
                    #expect(unpublished == 0)
                }
                // The README's example consumer reads the same topics and handles each distinct event once.
                let distinct = Set(
                    (changes + family + revocations).compactMap {
                        try? decoder.decode(EntitlementEvent.self, from: Data($0.value ?? [])).eventId
                    })
                let output = try await Self.runExampleConsumer(bootstrap: bootstrap)
                #expect(
                    output.contains("\(distinct.count) events handled, \(distinct.count) distinct event ids"),
                    "\(output.suffix(300))")
                #expect(
                    output.contains("Sandbox/com.example.app/sub-1 pro: entitlement.granted"), "\(output.prefix(300))")
            }
        }
    }

    /// What an attacker who can write to the verified topic, or holds one producer's key, might send; the updater
    /// must dead-letter each as `unauthenticated` and apply none:
    /// - an app purchase granting a year, unsigned; signed with a key the updater does not hold; signed by
    ///   refund-resolver, which may not write purchases;
    /// - a verified notification granting a year, signed with customer-api's key as customer-api (a kind it may not
    ///   write), then passed off as chain-verifier's;
    /// - a genuine record of chain-verifier altered after signing: its value, its time, and its producer renamed to
    ///   one the updater does not know; and one signed with a key chain-verifier no longer has.
    static func forgeries(
        of record: VerifiedNotificationRecord, signedAs genuine: ProducerRecord, topics: PipelineTopics
    )
        throws -> [ProducerRecord]
    {
        var transaction = record.notification.transaction!
        transaction.originalTransactionId = "forged-1"
        transaction.transactionId = "forged-1"
        transaction.expiresDate = Timestamp(
            millisecondsSince1970: Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000 * 365)
        let purchase = AppPurchaseRecord(
            requestId: "forged", appUserId: "thief", onConflict: .transfer, source: .signedTransaction,
            environment: "Sandbox", transaction: transaction, signedTransactionInfo: "x.y.z")
        let byCustomerAPI = try VerifiedTopicRecords.appPurchase(
            purchase, topics: topics, signing: TestRecordSigning.signer(.customerAPI))
        var unsigned = byCustomerAPI
        unsigned.headers.removeAll { $0.name.hasPrefix("record-") }
        let strangerKey = try RecordSigningKeys([(id: "test", secret: Array(repeating: 1, count: 32))])
        let byStranger = RecordSigner(.customerAPI, keys: strangerKey).sign(unsigned)
        let byResolver = TestRecordSigning.signer(.refundResolver).sign(unsigned)

        var notification = record
        notification.subject = "forged-2"
        notification.notification.transaction?.originalTransactionId = "forged-2"
        notification.notification.transaction?.expiresDate = transaction.expiresDate
        let grant = ProducerRecord(
            topic: topics.verified, key: Array("forged-2".utf8), value: try notification.encoded())
        let notificationByCustomerAPI = TestRecordSigning.signer(.customerAPI).sign(grant)
        let passedOff = notificationByCustomerAPI.replacingHeader(
            PipelineHeaders.recordProducer, with: "chain-verifier")

        var altered = genuine
        altered.value = Array(
            String(decoding: altered.value!, as: UTF8.self).replacingOccurrences(of: "sub-0", with: "sub-X").utf8)
        let moved = genuine.replacingHeader(PipelineHeaders.recordSignedAt, with: "1")
        let renamed = genuine.replacingHeader(PipelineHeaders.recordProducer, with: "billing-service")
        let oldKey = try RecordSigningKeys([(id: "old", secret: TestRecordSigning.secret(.chainVerifier))])
        let byOldKey = RecordSigner(.chainVerifier, keys: oldKey).sign(grant)
        return [
            unsigned, byStranger, byResolver, notificationByCustomerAPI, passedOff, altered, moved, renamed, byOldKey,
        ]
    }

    /// Runs `deploy/examples/consume_entitlements.py` until it has been idle for 4 s; returns what it printed.
    static func runExampleConsumer(bootstrap: String) async throws -> String {
        try await LocalComponents.python(
            "deploy/examples/consume_entitlements.py",
            ["--bootstrap", bootstrap, "--group", "example-\(UUID().uuidString)", "--max-seconds", "4"]
        ).1
    }
}
