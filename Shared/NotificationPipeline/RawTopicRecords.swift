import Foundation
public import PipelineRecords
public import RdKafka

/// The records of the raw topic: Apple's body as it arrived, keyed by its subject, with the headers the
/// chain-verifier and the DLQ read (received-at, environment, app, request id). Ingest and the backfill (`iapctl
/// backfill`, Apple's notification history) both write through it, so a backfilled notification is the record
/// ingest would have written.
public enum RawTopicRecords {
    /// The raw record of one notification body; `environment` and `bundleId` are what the envelope names (left
    /// out when it names none), `extraHeaders` follow the common ones.
    public static func notification(
        body: [UInt8], subject: String, environment: String?, bundleId: String?, requestID: String,
        topics: PipelineTopics, receivedAt: Date = Date(), extraHeaders: [KafkaHeader] = []
    ) -> ProducerRecord {
        var headers = [
            KafkaHeader(name: PipelineHeaders.receivedAt, text: String(Int64(receivedAt.timeIntervalSince1970 * 1000)))
        ]
        if let environment { headers.append(KafkaHeader(name: PipelineHeaders.environment, text: environment)) }
        if let bundleId { headers.append(KafkaHeader(name: PipelineHeaders.bundleId, text: bundleId)) }
        headers.append(KafkaHeader(name: PipelineHeaders.requestID, text: requestID))
        headers.append(contentsOf: extraHeaders)
        return ProducerRecord(topic: topics.raw, key: Array(subject.utf8), value: body, headers: headers)
    }
}
