import AppStoreModels
import AppStoreSigning
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

/// The updater checks Apple's signature itself (`UPDATER_APPLE_SIGNATURE_CHECK=required`), against a real broker
/// and PostgreSQL: whoever holds chain-verifier's record key (stolen) can sign anything as chain-verifier, and the
/// updater still applies only what Apple signed. Each forgery is dead-lettered `unauthenticated`, nothing of it
/// reaches a table, and the genuine notification is applied.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(4))) struct AppleSignatureRecheckTests {
    /// A DID_RENEW of subscription `original` signed by `fixtures`' hierarchy, its expiry 30 days after signing.
    static func signed(_ original: String, by fixtures: SignedFixtures) throws -> String {
        var payload = SignedFixtures.notification()
        payload.notificationUUID =
            "00000000-0000-4000-8000-\(String(repeating: "0", count: 12 - original.count))\(original)"
        var transaction = SignedFixtures.transaction()
        transaction.originalTransactionId = original
        transaction.transactionId = original + "9"
        var renewal = SignedFixtures.renewalInfo()
        renewal.originalTransactionId = original
        return try fixtures.signer.signNotification(payload, transaction: transaction, renewalInfo: renewal)
    }

    /// What chain-verifier publishes for `signed` (verified with `fixtures`' root), signed with its key.
    static func published(_ signed: String, verifiedWith fixtures: SignedFixtures, topics: PipelineTopics) async throws
        -> ProducerRecord
    {
        let (verified, json) = try await fixtures.verifier().verifyNotificationKeepingJSON(signed)
        return try VerifiedTopicRecords.notification(
            verified, json: json, source: .init(topic: topics.raw, partition: 0, offset: 7), carrying: [],
            topics: topics, signing: TestRecordSigning.signer(.chainVerifier))
    }

    /// `record` with its value changed by `change` and signed again with chain-verifier's key.
    static func resigned(_ record: ProducerRecord, _ change: (inout VerifiedNotificationRecord) -> Void) throws
        -> ProducerRecord
    {
        var decoded = try JSONDecoder().decode(VerifiedNotificationRecord.self, from: Data(record.value!))
        change(&decoded)
        var altered = record
        altered.key = Array(decoded.subject.utf8)
        altered.value = try decoded.encoded()
        return TestRecordSigning.signer(.chainVerifier).sign(altered)
    }

    @Test func withChainVerifiersKeyAloneNothingButWhatAppleSignedIsApplied() async throws {
        let fixtures = try SignedFixtures()
        let forger = try SignedFixtures()
        let topics = PipelineTopics()
        let genuine = try await Self.published(
            try Self.signed("1001", by: fixtures), verifiedWith: fixtures, topics: topics)
        // 1. A genuine record without Apple's payload.
        var stripped = try await Self.published(
            try Self.signed("1002", by: fixtures), verifiedWith: fixtures, topics: topics)
        stripped.headers.removeAll { $0.name == PipelineHeaders.appleSignedPayload }
        // 2. A genuine record of another subscription, its expiry moved a year on, Apple's payload kept.
        let extended = try Self.resigned(
            try await Self.published(try Self.signed("1003", by: fixtures), verifiedWith: fixtures, topics: topics)
        ) {
            $0.notification.transaction?.expiresDate = Timestamp(millisecondsSince1970: 4_102_444_800_000)
        }
        // 3. The genuine record's Apple payload vouching for a subscription it does not name.
        let borrowed = try Self.resigned(genuine) {
            $0.notification.transaction?.originalTransactionId = "1004"
            $0.subject = $0.subject.replacingOccurrences(of: "1001", with: "1004")
        }
        // 4. A notification of the forger's own hierarchy, its record matching it exactly.
        let foreign = try await Self.published(
            try Self.signed("1005", by: forger), verifiedWith: forger, topics: topics)

        try await withLocalBroker { bootstrap in
            try await withLocalPostgres { url in
                var logger = Logger(label: "apple-recheck")
                logger.logLevel = .error
                let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
                try await kafka.createTopics(topics.all.map { ($0, 2) })
                try await kafka.produce([stripped, extended, borrowed, foreign, genuine])

                let database = try DatabaseSettings(url: url)
                try await migrateDatabase(database, logger: logger)
                // The updater as a process of its binary, checking Apple's signature as deployed: the fixtures' root
                // is the Apple root it trusts, for the fixtures' app in Sandbox.
                let directory = try LocalComponents.temporaryDirectory("apple-recheck")
                try fixtures.pki.write(to: directory.appendingPathComponent("pki"))
                let fleet = try ServiceFleet(
                    environment: [
                        "DATABASE_URL": url, "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "KAFKA_SESSION_TIMEOUT_MS": "6000",
                        "UPDATER_APPLE_SIGNATURE_CHECK": "required", "LOG_LEVEL": "warning",
                        "APPSTORE_APPS": "\(SignedFixtures.bundleId):\(SignedFixtures.appAppleId)",
                        "APPSTORE_ENVIRONMENTS": "Sandbox",
                        "APPSTORE_ROOT_CERTIFICATES": directory.appendingPathComponent("pki/root.der").path,
                    ],
                    directory: directory, only: ["entitlement-updater"])
                let (rejected, applied) = try await fleet.whileRunning {
                    let rejected = try await kafka.readAll(
                        topics.rejected, atLeast: 4, quiet: .seconds(1), timeout: .seconds(90))
                    var applied: [String] = []
                    try await Polling.until(looks: 600, every: .milliseconds(100)) {
                        applied = try await Self.loggedSubjects(database, logger: logger)
                        return !applied.isEmpty
                    }
                    return (rejected, applied)
                }

                let reasons = try rejected.map {
                    try JSONDecoder().decode(RejectedNotificationRecord.self, from: Data($0.value ?? []))
                }
                .map { "\($0.reason): \($0.detail)" }.sorted()
                #expect(reasons.count == 4 && reasons.allSatisfy { $0.hasPrefix("unauthenticated: ") }, "\(reasons)")
                for expected in [
                    "carries no apple-signed-payload header", "Apple's signature does not hold: chain",
                    "the record differs from the notification Apple signed",
                ] {
                    #expect(reasons.contains { $0.contains(expected) }, "\(expected) among \(reasons)")
                }
                #expect(
                    reasons.filter { $0.contains("differs") }.count == 2, "the moved expiry and the borrowed payload")
                #expect(
                    applied.count == 1 && applied.first?.hasSuffix("1001") == true,
                    "only the notification Apple signed reached the log: \(applied)")
                let entitlements = try await Self.entitlements(database, logger: logger)
                #expect(
                    entitlements == ["1001": SignedFixtures.signedDate.millisecondsSince1970 + 2_592_000_000],
                    "one entitlement, until the expiry Apple signed: \(entitlements)")
            }
        }
    }

    /// The subjects in the notification log.
    static func loggedSubjects(_ database: DatabaseSettings, logger: Logger) async throws -> [String] {
        try await DatabaseClient.with(database, logger: logger) { client in
            var subjects: [String] = []
            for try await subject in try await client.query(
                "SELECT DISTINCT subject FROM notification_log ORDER BY subject", logger: logger
            ).decode(String.self) { subjects.append(subject) }
            return subjects
        }
    }

    /// Each entitlement's original transaction id and end.
    static func entitlements(_ database: DatabaseSettings, logger: Logger) async throws -> [String: Int64] {
        try await DatabaseClient.with(database, logger: logger) { client in
            var rows: [String: Int64] = [:]
            for try await (original, until) in try await client.query(
                "SELECT original_transaction_id, valid_until FROM entitlements", logger: logger
            ).decode((String, Int64).self) { rows[original] = until }
            return rows
        }
    }
}
