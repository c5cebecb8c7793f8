import Foundation
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
import Storage

/// Records every DLQ record (the rejected topic) as a row of `dead_letters`, so the support console can show a
/// customer's rejections with their reason and replay them. Idempotent by DLQ position; a failed batch is
/// retried by the consumer loop (for instance until the migration that creates the table has run).
struct DeadLetterRecorder: BatchHandler {
    let deadLetters: DeadLetters

    func handle(_ records: [ConsumerRecord]) async throws {
        try await self.deadLetters.record(try records.compactMap(Self.entry))
    }

    /// The row of one record of the rejected topic: its DLQ record's fields, or `unreadable` with the value kept
    /// as text when it is not a DLQ record. nil for a record without a value.
    static func entry(_ record: ConsumerRecord) throws -> DeadLetters.Entry? {
        guard let value = record.value else { return nil }
        let rejected = try? JSONDecoder().decode(RejectedNotificationRecord.self, from: Data(value))
        let text = String(decoding: value, as: UTF8.self)
        return DeadLetters.Entry(
            topic: record.topic, partition: record.partition, offset: record.offset,
            subject: rejected?.original.key ?? record.key.map { String(decoding: $0, as: UTF8.self) },
            environment: rejected?.original.headers[PipelineHeaders.environment], bundleId: rejected?.bundleId,
            reason: rejected?.reason ?? "unreadable", detail: rejected?.detail,
            notificationUUID: rejected?.notificationUUID,
            json: rejected != nil ? text : String(decoding: try JSONEncoder().encode(["unparsed": text]), as: UTF8.self)
        )
    }
}
