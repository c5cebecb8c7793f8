import AppStoreModels
import Foundation
import JWSVerification
import PipelineRecords
import RdKafka
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// What a test says about a lost notification names where it stopped, read from a real broker: in the raw topic only
/// (Apple's body, found through its signed payload), also verified (found in the record's JSON), or in no topic.
@Suite(.tags(.integration), .notInUnitRuns, .timeLimit(.minutes(3))) struct LossLocatorTests {
    @Test func eachLostNotificationIsFoundWhereItStopped() async throws {
        try await withLocalBroker { bootstrap in
            let topics = PipelineTopics()
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            try await kafka.createTopics([topics.raw, topics.verified, topics.rejected].map { ($0, 1) })
            let signedPayload = try String(
                contentsOf: LocalComponents.repositoryRoot.appending(
                    path: "Tests/Fixtures/real-sandbox/signedPayload_DID_RENEW"), encoding: .utf8
            ).trimmingCharacters(in: .whitespacesAndNewlines)
            let apples = try #require(
                try UnverifiedJWS(signedPayload).decodePayload(as: ResponseBodyV2DecodedPayload.self).notificationUUID)
            let verifiedOnly = "0d2f6c1e-1111-4a55-8a55-0b6a1c2d3e01"
            let nowhere = "0d2f6c1e-2222-4a55-8a55-0b6a1c2d3e02"
            try await kafka.produce([
                ProducerRecord(
                    topic: topics.raw, key: Array("k".utf8),
                    value: Array(#"{"signedPayload":"\#(signedPayload)"}"#.utf8)),
                ProducerRecord(
                    topic: topics.verified, key: Array("k".utf8),
                    value: Array(#"{"payload":{"notificationUUID":"\#(verifiedOnly)"}}"#.utf8)),
                // Something in every topic, as in a real run (an empty topic costs the locator its read timeout).
                ProducerRecord(
                    topic: topics.rejected, key: Array("k".utf8),
                    value: Array(#"{"reason":"envelope","notificationUUID":null}"#.utf8)),
            ])
            let lines = await LossLocator.locate([apples, verifiedOnly, nowhere], bootstrap: bootstrap)
            #expect(lines.contains("\(apples): \(topics.raw)[0]@0"), "\(lines)")
            #expect(lines.contains("\(verifiedOnly): \(topics.verified)[0]@0"), "\(lines)")
            #expect(lines.contains("\(nowhere): in no topic"), "\(lines)")
        }
    }
}
