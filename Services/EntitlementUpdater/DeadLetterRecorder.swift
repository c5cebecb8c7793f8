import RdKafka
import ServiceRuntime
import Storage

/// Records every DLQ record (the rejected topic) as a row of `dead_letters`, so the support console can show a
/// customer's rejections with their reason and replay them. Idempotent by DLQ position; a failed batch is
/// retried by the consumer loop (for instance until the migration that creates the table has run).
struct DeadLetterRecorder: BatchHandler {
    let deadLetters: DeadLetters

    func handle(_ records: [ConsumerRecord]) async throws {
        try await self.deadLetters.record(records)
    }
}
