import Foundation
import PipelineRecords
import RdKafka
import TestSupport
import Testing

@testable import AppStoreAPI
@testable import NotificationPipeline

/// The raw topic has one record factory: a notification the backfill fetched from Apple's history is the record
/// ingest would have written for the same body, marked with the run it came from.
@Suite struct RawTopicRecordsTests {
    @Test func aBackfilledNotificationIsTheRecordIngestWouldHaveWritten() throws {
        var topics = PipelineTopics()
        topics.raw = "team.raw"
        let renewed = VerifiedRecords.step("DID_RENEW", original: "sub-1", day: 30, expiresDay: 60)
        let item = VerifiedHistoryNotification(
            signedPayload: "header.payload.signature", notification: renewed.notification, sendAttempts: [])
        let backfilled = NotificationBackfill.record(item, topics: topics, runID: "run-1")
        let ingested = RawTopicRecords.notification(
            body: backfilled.value ?? [], subject: "sub-1", environment: "Sandbox", bundleId: "com.example.app",
            requestID: "backfill-run-1", topics: topics)

        #expect(backfilled.topic == "team.raw" && ingested.topic == "team.raw")
        #expect(backfilled.key == Array("sub-1".utf8) && backfilled.key == ingested.key)
        let envelope = try JSONSerialization.jsonObject(with: Data(backfilled.value ?? [])) as? [String: String]
        #expect(envelope == ["signedPayload": "header.payload.signature"], "Apple's body, as Apple posts it")
        let byName = { (record: ProducerRecord) in
            Dictionary(record.headers.map { ($0.name, $0.value ?? []) }, uniquingKeysWith: { first, _ in first })
        }
        var backfilledHeaders = byName(backfilled)
        #expect(backfilledHeaders.removeValue(forKey: NotificationBackfill.sourceHeader) == Array("run-1".utf8))
        let ingestedHeaders = byName(ingested)
        #expect(Set(backfilledHeaders.keys) == Set(ingestedHeaders.keys))
        for name in ingestedHeaders.keys where name != PipelineHeaders.receivedAt {
            #expect(backfilledHeaders[name] == ingestedHeaders[name], "header \(name)")
        }
    }
}
