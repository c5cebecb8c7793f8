import ArgumentParser
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime

/// `iapctl replay`: moves DLQ records back to the topic they came from (raw notifications to the raw
/// topic, status requests to the status-requests topic), once the cause is fixed (a root or app configured,
/// an outage over). A consumer group keeps the place, so each DLQ record is moved once per group.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Move DLQ records back to the topic they came from.",
        discussion: """
            Reads the rejected topic from where the group left off until it has been quiet for --quiet-ms. Records \
            whose reason is not --reason (when given) are skipped and stay behind for that group: use another --group \
            to look at them again. Replayed records keep their key and headers and gain replayed-from.
            """)

    @Option(
        name: .customLong("bootstrap-servers"),
        help: "Comma-separated host:port list (default KAFKA_BOOTSTRAP_SERVERS).")
    var bootstrapServers: String?
    @Option(help: "Only records refused for this reason (e.g. certificate, app-identifier, status-request).")
    var reason: String?
    @Option(help: "Consumer group that remembers what was replayed.") var group = "iapctl-replay"
    @Option(help: "Stop after this many replayed records.") var limit: Int?
    @Option(help: "Stop once no record arrived for this long (ms).") var quietMs = 3000
    @Option(help: "How long to wait for the first record, joining the group included (ms).") var waitMs = 15000
    @Flag(help: "Show what would be replayed without producing or advancing the group.") var dryRun = false

    func run() async throws {
        let logger = APIAccess.quietLogger
        let topics = PipelineTopics(.process)
        let client = try KafkaAccess.client(self.bootstrapServers, clientID: "iapctl-replay")
        do {
            let consumer = try KafkaConsumer(
                configuration: KafkaConsumerConfiguration(
                    client: client, groupID: self.group, topics: [topics.rejected], sessionTimeout: .seconds(10)),
                logger: logger)
            let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(client: client), logger: logger)
            var counts = ReplayCounts()
            let clock = ContinuousClock()
            var lastArrival = clock.now
            var seenAny = false
            while clock.now - lastArrival < .milliseconds(seenAny ? self.quietMs : self.waitMs)
                && counts.replayed < (self.limit ?? .max)
            {
                let batch = try await consumer.poll(maxMessages: 100, timeout: .milliseconds(200))
                guard !batch.isEmpty else { continue }
                lastArrival = clock.now
                seenAny = true
                var taken: [ConsumerRecord] = []
                var deliveries: [PendingDelivery] = []
                for record in batch {
                    guard counts.replayed < (self.limit ?? .max) else { break }
                    taken.append(record)
                    guard let plan = Self.plan(record, reason: self.reason) else {
                        counts.skipped += 1
                        continue
                    }
                    counts.replayed += 1
                    counts.byTopic[plan.topic, default: 0] += 1
                    if !self.dryRun { deliveries.append(try await producer.enqueue(plan)) }
                }
                for delivery in deliveries { _ = try await delivery.report }
                if !self.dryRun { consumer.storeOffsets(after: taken) }
            }
            await producer.shutdown()
            await consumer.close()
            let topicsText = counts.byTopic.sorted { $0.key < $1.key }.map { "\($0.value) to \($0.key)" }.joined(
                separator: ", ")
            StandardStreams.writeOutput(
                "replay\(self.dryRun ? " (dry run)" : ""): \(counts.replayed) replayed\(topicsText.isEmpty ? "" : " (\(topicsText))"), \(counts.skipped) skipped"
            )
        } catch {
            StandardStreams.writeError("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// What a replay did.
    struct ReplayCounts {
        var replayed = 0
        var skipped = 0
        var byTopic: [String: Int] = [:]
    }

    /// The record to send back, or nil when the DLQ record is not replayable or not selected.
    static func plan(_ record: ConsumerRecord, reason: String?) -> ProducerRecord? {
        guard let value = record.value,
            let rejected = try? JSONDecoder().decode(RejectedNotificationRecord.self, from: Data(value)),
            reason == nil || rejected.reason == reason
        else { return nil }
        return rejected.replayRecord(from: "\(record.topic)/\(record.partition)/\(record.offset)")
    }
}
