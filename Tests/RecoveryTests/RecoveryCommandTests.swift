import AppStoreModels
@testable import AppStoreSim
import Foundation
import NotificationPipeline
import RdKafka
import Testing
import TestSupport

/// `iapctl replay` and `iapctl test-notification`, the real binary, against a real broker and the sim.
@Suite(.serialized, .timeLimit(.minutes(3))) struct RecoveryCommandTests {
    @Test func replayMovesDeadLettersBackToTheirTopicOncePerGroup() async throws {
        try await withLocalBroker { bootstrap in
            let topics = PipelineTopics()
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            try await kafka.createTopics(topics.all.map { ($0, 1) })
            func deadLetter(_ reason: String, topic: String, key: String, value: String) throws -> ProducerRecord {
                let original = RejectedNotificationRecord.OriginalMessage(
                    topic: topic, partition: 0, offset: 7, key: key, value: value, headers: ["received-at": "1700000000000"])
                let record = RejectedNotificationRecord(reason: reason, detail: "test", notificationUUID: nil, original: original)
                return ProducerRecord(topic: topics.rejected, key: Array(key.utf8), value: try record.encoded())
            }
            try await kafka.produce([
                try deadLetter("certificate", topic: topics.raw, key: "sub-1", value: #"{"signedPayload":"a.b.c"}"#),
                try deadLetter("status-request", topic: topics.statusRequests, key: "sub-2", value: #"{"requestId":"r"}"#),
                try deadLetter("certificate", topic: topics.raw, key: "sub-3", value: #"{"signedPayload":"d.e.f"}"#),
                ProducerRecord(topic: topics.rejected, key: nil, value: Array("not a DLQ record".utf8)),
            ])
            let environment = ["KAFKA_BOOTSTRAP_SERVERS": bootstrap]
            let (status, output) = try await IAPCtlProcess.run(["replay", "--reason", "certificate", "--quiet-ms", "2000"], environment: environment)
            #expect(status == 0, "\(output)")
            #expect(output.contains("2 replayed (2 to \(topics.raw)), 2 skipped"), "\(output)")
            let raw = try await kafka.readAll(topics.raw, atLeast: 2, quiet: .seconds(1), timeout: .seconds(20))
            #expect(raw.map { $0.key.map { String(decoding: $0, as: UTF8.self) } } == ["sub-1", "sub-3"])
            #expect(raw.first?.value == Array(#"{"signedPayload":"a.b.c"}"#.utf8), "the exact original value")
            #expect(raw.first?.header("received-at")?.text == "1700000000000")
            #expect(raw.first?.header("replayed-from")?.text?.hasPrefix(topics.rejected) == true)

            let (again, secondOutput) = try await IAPCtlProcess.run(["replay", "--quiet-ms", "2000", "--wait-ms", "4000"], environment: environment)
            #expect(again == 0 && secondOutput.contains("0 replayed"), "the group remembers: \(secondOutput)")
            let (other, otherOutput) = try await IAPCtlProcess.run(["replay", "--group", "second-look", "--reason", "status-request", "--quiet-ms", "2000"],
                                                       environment: environment)
            #expect(other == 0 && otherOutput.contains("1 replayed (1 to \(topics.statusRequests))"), "\(otherOutput)")
        }
    }

    @Test func testNotificationWaitsUntilTheNotificationArrived() async throws {
        try await withLocalBroker { bootstrap in
            try await SimHarness.with(customers: 1, seed: 1, configure: { $0.ingestURL = "http://127.0.0.1:\($0.port)/sim/sink" }) { sim in
                let directory = try LocalComponents.temporaryDirectory("test-notification")
                let environment = try sim.environment(directory: directory, bootstrap: bootstrap)
                let (status, output) = try await IAPCtlProcess.run(["test-notification", "--timeout", "20"], environment: environment)
                #expect(status == 0, "\(output)")
                // Every configured app in every accepted environment, each with its own bid and base URL.
                #expect(output.contains("delivered: com.example.subscriptions (Production): notificationUUID"), "\(output)")
                #expect(output.contains("delivered: com.example.subscriptions (Sandbox): notificationUUID"), "\(output)")
                #expect(await sim.stats.calls["test"] == 2)
                let (narrowed, narrowedOutput) = try await IAPCtlProcess.run(
                    ["test-notification", "--timeout", "20", "--environment", "Sandbox"], environment: environment)
                #expect(narrowed == 0 && !narrowedOutput.contains("(Production)"), "\(narrowedOutput)")
                #expect(await sim.stats.calls["test"] == 3)

                var broken = environment
                broken["APPSTORE_API_KEY_ID"] = "WRONGKEY"
                let (refused, refusedOutput) = try await IAPCtlProcess.run(["test-notification", "--timeout", "5"], environment: broken)
                #expect(refused == 1 && refusedOutput.contains("401"), "\(refusedOutput)")
            }
        }
    }
}
