import AppStoreModels
import AppStoreSigning
import Foundation
import JWSVerification
import Logging
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
import TestSupport
import Testing

/// The chain verifier, a process of its binary, against a real broker: verified notifications out in per-key order,
/// everything else in the DLQ with its reason and the original message.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct ChainVerifierFlowTests {
    @Test func rawMessagesEndVerifiedInOrderOrDeadLetteredWithTheirReason() async throws {
        try await withLocalBroker { bootstrap in
            let fixtures = try SignedFixtures()
            let impostor = try SignedFixtures()
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            let topics = PipelineTopics()
            try await kafka.createTopics([(topics.raw, 3), (topics.verified, 3), (topics.rejected, 3)])

            var raw: [ProducerRecord] = []
            for sequence in 0..<10 {
                for subscription in ["sub-a", "sub-b", "sub-c"] {
                    let uuid = "\(subscription)-\(sequence)"
                    raw.append(
                        RawMessages.record(
                            try RawMessages.notification(
                                uuid: uuid, original: subscription, sequence: sequence, signer: fixtures.signer),
                            subject: subscription, topic: topics.raw))
                }
            }
            raw.append(
                RawMessages.record(
                    try RawMessages.notification(
                        uuid: "forged-1", original: "sub-a", sequence: 99, signer: impostor.signer),
                    subject: "sub-a", topic: topics.raw))
            raw.append(
                RawMessages.record(
                    try RawMessages.notification(
                        uuid: "production-1", original: "sub-p", sequence: 1, signer: fixtures.signer,
                        environment: .production),
                    subject: "sub-p", topic: topics.raw, environment: "Production"))
            // Apple's notification of an app not configured, and a forged one of an environment not configured.
            raw.append(
                RawMessages.record(
                    try RawMessages.notification(
                        uuid: "other-app-1", original: "sub-o", sequence: 1, signer: fixtures.signer,
                        bundleId: "com.example.other"),
                    subject: "sub-o", topic: topics.raw))
            raw.append(
                RawMessages.record(
                    try RawMessages.notification(
                        uuid: "forged-production", original: "sub-fp", sequence: 1, signer: impostor.signer,
                        environment: .production),
                    subject: "sub-fp", topic: topics.raw, environment: "Production"))
            raw.append(ProducerRecord(topic: topics.raw, key: Array("junk".utf8), value: Array("hello".utf8)))
            raw.append(ProducerRecord(topic: topics.raw, key: Array("tomb".utf8), value: nil))
            try await kafka.produce(raw)

            // The chain-verifier as a process of its binary, trusting the fixtures' root (a file, as deployed) for the
            // fixtures' app in Sandbox.
            let directory = try LocalComponents.temporaryDirectory("chain-verifier-flow")
            try fixtures.pki.write(to: directory.appendingPathComponent("pki"))
            let fleet = try ServiceFleet(
                environment: [
                    "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "KAFKA_SESSION_TIMEOUT_MS": "6000", "LOG_LEVEL": "warning",
                    "APPSTORE_APPS": "\(SignedFixtures.bundleId):\(SignedFixtures.appAppleId)",
                    "APPSTORE_ENVIRONMENTS": "Sandbox",
                    "APPSTORE_ROOT_CERTIFICATES": directory.appendingPathComponent("pki/root.der").path,
                ],
                directory: directory, only: ["chain-verifier"])
            let (verified, rejected, metrics) = try await fleet.whileRunning {
                (
                    try await kafka.readAll(topics.verified, atLeast: 30, quiet: .seconds(2)),
                    try await kafka.readAll(topics.rejected, atLeast: 6, quiet: .seconds(1)),
                    try await fleet.metrics("chain-verifier", http: .shared)
                )
            }

            // Verified: all thirty, keyed by subscription, in signing order per subscription.
            let records = try verified.map(RawMessages.verified)
            #expect(Set(records.map { $0.notification.payload.notificationUUID! }).count == 30)
            #expect(verified.count == 30)
            for subscription in ["sub-a", "sub-b", "sub-c"] {
                let sequence = zip(verified, records).filter { $0.0.key == Array(subscription.utf8) }.map {
                    $0.1.notification.payload.notificationUUID!
                }
                #expect(sequence == (0..<10).map { "\(subscription)-\($0)" })
            }
            #expect(
                records.allSatisfy {
                    $0.schema == VerifiedNotificationRecord.schema && $0.notification.transaction != nil
                })
            #expect(
                verified.allSatisfy {
                    $0.header(PipelineHeaders.verifiedAt) != nil && $0.header(PipelineHeaders.requestID) != nil
                })
            #expect(
                verified.allSatisfy { $0.header(PipelineHeaders.bundleId)?.text == SignedFixtures.bundleId },
                "the app travels in a header")

            // Rejected: each with its reason and the original message unchanged.
            let dead = try rejected.map(RawMessages.rejected)
            #expect(rejected.count == 6)
            let reasons = Dictionary(
                dead.map { ($0.original.key ?? "", $0.reason) }, uniquingKeysWith: { first, _ in first })
            #expect(reasons["sub-a"] == "chain")
            // Apple's, of an environment or app not configured: parked under their own reasons, to be replayed.
            #expect(reasons["sub-p"] == "unknown-environment")
            #expect(reasons["sub-o"] == "unknown-app")
            #expect(
                reasons["sub-fp"] == "chain", "a forgery of an environment not configured is no parked notification")
            #expect(reasons["junk"] == "envelope")
            #expect(reasons["tomb"] == "envelope")
            let forged = try #require(dead.first { $0.original.key == "sub-a" })
            #expect(forged.notificationUUID == "forged-1")
            #expect(forged.original.value.map { Array($0.utf8) } == raw[30].value)
            #expect(forged.original.headers[PipelineHeaders.requestID] == "req-sub-a")

            #expect(metrics.contains("chain_verifier_verified_total 30"))
            #expect(metrics.contains("chain_verifier_rejected_total{reason=\"envelope\"} 2"))
        }
    }
}
