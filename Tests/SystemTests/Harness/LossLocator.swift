import AppStoreModels
import Foundation
import JWSVerification
import PipelineRecords
import RdKafka
import TestSupport

/// Where notifications missing from the log are in the pipeline's topics, so that a test reporting a loss names the
/// stage that dropped it (the broker after ingest's 200, the chain-verifier, the updater) instead of only a count.
public enum LossLocator {
    /// One line per notification of `uuids`: the topics, partitions and offsets it was found at, or that it is in none.
    public static func locate(_ uuids: Set<String>, bootstrap: String) async -> [String] {
        guard !uuids.isEmpty else { return [] }
        let topics = PipelineTopics()
        let client = KafkaTestClient(bootstrapServers: [bootstrap])
        var found: [String: [String]] = [:]
        var unread: [String] = []
        for topic in [topics.raw, topics.verified, topics.rejected] {
            // At least one record: a fresh group reads nothing until it has joined (seconds), and an empty topic
            // costs the timeout.
            guard
                let records = try? await client.readAll(
                    topic, atLeast: 1, quiet: .seconds(3), timeout: .seconds(30))
            else {
                unread.append(topic)
                continue
            }
            for record in records {
                for uuid in Self.uuids(in: record, raw: topic == topics.raw).intersection(uuids) {
                    found[uuid, default: []].append("\(topic)[\(record.partition)]@\(record.offset)")
                }
            }
        }
        let note = unread.isEmpty ? "" : " (unreadable: \(unread.joined(separator: ", ")))"
        return uuids.sorted().map { "\($0): \(found[$0]?.joined(separator: ", ") ?? "in no topic")\(note)" }
    }

    /// The notification UUIDs a record is about: a raw record's from Apple's signed payload (base64url, so decoded
    /// without verification), any other's as text in its JSON.
    static func uuids(in record: ConsumerRecord, raw: Bool) -> Set<String> {
        guard let value = record.value else { return [] }
        if raw {
            guard let signed = EnvelopeReader.signedPayload(in: value),
                let payload = try? UnverifiedJWS(signed).decodePayload(as: ResponseBodyV2DecodedPayload.self),
                let uuid = payload.notificationUUID
            else { return [] }
            return [uuid]
        }
        let text = String(decoding: value, as: UTF8.self)
        let pattern = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/
        return Set(text.matches(of: pattern).map { String($0.output) })
    }
}
