import AppStoreModels
import AppStoreSigning
import Foundation
import JWSVerification
import NotificationPipeline
import PipelineRecords
import RdKafka
import TestSupport
import Testing

/// SIGKILL of the real `chain-verifier` binary mid-stream, then a restart: every raw message ends verified
/// or rejected, and a message seen twice is an exact repeat.
@Suite(.heavy, .tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(8)))
struct ChainVerifierCrashTests {
    @Test func killedMidStreamAndRestartedItLosesNothing() async throws {
        #expect(
            FileManager.default.isExecutableFile(
                atPath: ServiceProcess.binaries.appendingPathComponent("chain-verifier").path),
            "build chain-verifier before the tests")
        try await withLocalBroker { bootstrap in
            let fixtures = try SignedFixtures()
            let impostor = try SignedFixtures()
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            let topics = PipelineTopics()
            try await kafka.createTopics([(topics.raw, 4), (topics.verified, 4), (topics.rejected, 4)])

            let total = 2000
            var raw: [ProducerRecord] = []
            var forgedUUIDs: Set<String> = []
            for index in 0..<total {
                let subscription = "sub-\(index % 200)"
                let forged = index % 25 == 0
                let uuid = "n-\(index)"
                if forged { forgedUUIDs.insert(uuid) }
                raw.append(
                    RawMessages.record(
                        try RawMessages.notification(
                            uuid: uuid, original: subscription, sequence: index / 200,
                            signer: forged ? impostor.signer : fixtures.signer),
                        subject: subscription, topic: topics.raw))
            }
            try await kafka.produce(raw)

            let directory = try LocalComponents.temporaryDirectory("chain-verifier")
            defer { try? FileManager.default.removeItem(at: directory) }
            let root = directory.appendingPathComponent("root.der")
            try Data(TestPKI.der(fixtures.pki.root)).write(to: root)
            let environment = [
                "APPSTORE_APPS": "\(SignedFixtures.bundleId):\(SignedFixtures.appAppleId)",
                "APPSTORE_ENVIRONMENTS": "Sandbox",
                "APPSTORE_ROOT_CERTIFICATES": root.path, "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
                "KAFKA_SESSION_TIMEOUT_MS": "6000",
                "CHAIN_VERIFIER_BATCH": "50", "HTTP_HOST": "127.0.0.1", "HTTP_PORT": "0", "LOG_LEVEL": "warning",
                "RECORD_SIGNING_KEYS": TestRecordSigning.variable(.chainVerifier),
            ]
            let log = directory.appendingPathComponent("chain-verifier.log")

            // First run: killed once some, but not all, output exists.
            let first = try ServiceProcess.start("chain-verifier", environment: environment, log: log)
            let early = try await kafka.readAll(topics.verified, atLeast: 300, quiet: .zero, timeout: .seconds(90))
            kill(first.processIdentifier, SIGKILL)
            _ = try await ServiceProcess.exitStatus(of: first)
            #expect(first.terminationReason == .uncaughtSignal)
            #expect(early.count >= 300 && early.count < total, "killed mid-stream (\(early.count) verified so far)")

            // Second run: finishes the stream.
            let second = try ServiceProcess.start("chain-verifier", environment: environment, log: log)
            let verified = try await kafka.readAll(
                topics.verified, atLeast: total - forgedUUIDs.count, quiet: .seconds(3), timeout: .seconds(240))
            let rejected = try await kafka.readAll(
                topics.rejected, atLeast: forgedUUIDs.count, quiet: .seconds(1), timeout: .seconds(60))
            #expect(await ServiceProcess.stop(second) == 0, "graceful shutdown on SIGTERM")

            var verifiedValues: [String: [UInt8]] = [:]
            for record in verified {
                let uuid = try RawMessages.verified(record).notification.payload.notificationUUID!
                if let earlier = verifiedValues[uuid] {
                    #expect(earlier == record.value, "a repeat of \(uuid) differs from the first copy")
                }
                verifiedValues[uuid] = record.value
            }
            let rejectedUUIDs = Set(try rejected.map { try RawMessages.rejected($0).notificationUUID ?? "" })
            #expect(Set(verifiedValues.keys).count == total - forgedUUIDs.count, "every valid notification verified")
            #expect(Set(verifiedValues.keys).isDisjoint(with: forgedUUIDs))
            #expect(rejectedUUIDs == forgedUUIDs, "every forged notification dead-lettered, nothing else")
            #expect(Set(verifiedValues.keys).union(rejectedUUIDs).count == total, "nothing lost")
        }
    }
}
