import Foundation
import Logging
import RdKafka
import TestSupport
import Testing

/// A consumer tailing a partition that several producers write at once, on the real broker (Tansu): it hands on every
/// record the partition stores, none skipped. Tansu 0.6 moves a partition's end before it stores the batch, so a tail
/// can fetch a later batch first; without ``KafkaConsumer``'s gap guard librdkafka then moves past the earlier batch
/// for good (seen in a run of this shape: one batch of 16 of 3,200 records).
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(4))) struct KafkaGapTests {
    let logger = Logger(label: "kafka-gap-test")

    @Test func aTailingConsumerGetsEveryRecordSeveralProducersWrite() async throws {
        try await withLocalBroker { bootstrap in
            let topic = "tailed"
            let client = KafkaClientSettings(bootstrapServers: [bootstrap])
            try await KafkaAdmin(settings: client, logger: self.logger).createTopics([(topic, 1)])
            var configuration = KafkaConsumerConfiguration(client: client, groupID: "tail", topics: [topic])
            configuration.sessionTimeout = .seconds(6)
            configuration.heartbeatInterval = .milliseconds(500)
            configuration.fetchWait = .milliseconds(10)
            let consumer = try KafkaConsumer(configuration: configuration, logger: self.logger)
            // Tailing, not catching up: the member holds the partition before anything is written.
            var joinPolls = 0
            while consumer.assignment().partitions == 0, joinPolls < 300 {
                _ = try await consumer.poll(maxMessages: 1, timeout: .milliseconds(100))
                joinPolls += 1
            }
            try #require(consumer.assignment().partitions == 1, "the member holds the partition")

            // Four producers, each 50 batches of 16 records of a notification's size.
            let producers = 4, batches = 50, perBatch = 16
            let total = producers * batches * perBatch
            // Bytes that do not repeat (a signed payload's are base64 of signatures and keys).
            var generator = SystemRandomNumberGenerator()
            let padding = (0..<15_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let tail = Task {
                var offsets: [Int64] = []
                var values = Set<[UInt8]>()
                var emptyPolls = 0
                // Counted polls, not a clock: 300 empty polls of 100 ms after the last record.
                while values.count < total, emptyPolls < 300 {
                    let records = try await consumer.poll(maxMessages: 500, timeout: .milliseconds(100))
                    emptyPolls = records.isEmpty ? emptyPolls + 1 : 0
                    for record in records {
                        offsets.append(record.offset)
                        values.insert(Array(record.value?.prefix(24) ?? []))
                    }
                }
                return (offsets, values)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for producerIndex in 0..<producers {
                    group.addTask {
                        let producer = try KafkaProducer(
                            configuration: KafkaProducerConfiguration(client: client), logger: self.logger)
                        for batch in 0..<batches {
                            try await producer.send(
                                (0..<perBatch).map { index in
                                    let name = String(format: "%03d-%05d-%05d-", producerIndex, batch, index)
                                    return ProducerRecord(topic: topic, key: nil, value: Array(name.utf8) + padding)
                                })
                        }
                        await producer.shutdown()
                    }
                }
                try await group.waitForAll()
            }
            let (offsets, values) = try await tail.value
            let gaps = consumer.gapCounts
            await consumer.close()
            print(
                "tailing \(producers) producers: \(values.count) of \(total) records, gaps met \(gaps.seen), filled "
                    + "\(gaps.filled), accepted \(gaps.accepted)")
            let missing = Set(0..<Int64(total)).subtracting(offsets).sorted()
            #expect(values.count == total, "every record stored was handed on")
            #expect(missing.isEmpty, "offsets never handed on: \(missing.count), from \(missing.prefix(3))")
            #expect(gaps.accepted == 0, "no gap was accepted: every one filled")
            #expect(gaps.seen == gaps.filled)
        }
    }
}
