public import Foundation
public import Logging
public import RdKafka

/// Reads and writes topics in tests, against a real broker or the mock cluster.
public struct KafkaTestClient: Sendable {
    /// The brokers and how to reach them.
    public let client: KafkaClientSettings
    public let logger: Logger

    /// The brokers.
    public var bootstrapServers: [String] { self.client.bootstrapServers }

    /// A client for brokers reached in plaintext; logs only errors.
    public init(bootstrapServers: [String]) {
        self.init(client: KafkaClientSettings(bootstrapServers: bootstrapServers))
    }

    /// A client with its own settings (security included); logs only errors.
    public init(client: KafkaClientSettings) {
        self.client = client
        var logger = Logger(label: "kafka-test-client")
        logger.logLevel = .error
        self.logger = logger
    }

    /// Creates topics.
    public func createTopics(_ topics: [(String, Int)]) async throws {
        try await KafkaAdmin(
            settings: self.client, logger: self.logger
        )
        .createTopics(topics.map { (name: $0.0, partitions: $0.1) })
    }

    /// Produces records in order and waits for every acknowledgement.
    public func produce(_ records: [ProducerRecord]) async throws {
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                client: self.client), logger: self.logger)
        var pending: [PendingDelivery] = []
        for record in records { pending.append(try await producer.enqueue(record)) }
        for delivery in pending { _ = try await delivery.report }
        await producer.shutdown()
    }

    /// Reads a topic from the beginning with a fresh group until `count` records arrived and then nothing
    /// more for `quiet`, or until `timeout` passed without records; returns everything read.
    public func readAll(
        _ topic: String, atLeast count: Int, quiet: Duration = .seconds(1), timeout: Duration = .seconds(60)
    ) async throws -> [ConsumerRecord] {
        var configuration = KafkaConsumerConfiguration(
            client: self.client,
            groupID: "reader-\(UUID().uuidString)", topics: [topic])
        configuration.sessionTimeout = .seconds(6)
        configuration.heartbeatInterval = .milliseconds(500)
        let consumer = try KafkaConsumer(configuration: configuration, logger: self.logger)
        // Counted in polls, not against a clock (see ``Polling``): `timeout` and `quiet` are how many empty 200 ms
        // polls they make on an idle machine. A stream that never pauses ends after ten times as many polls.
        let interval = Duration.milliseconds(200)
        let emptyPollsAllowed = Polling.looks(in: timeout, every: interval)
        let quietPolls = Polling.looks(in: quiet, every: interval)
        var records: [ConsumerRecord] = []
        var emptyPolls = 0
        var emptyInARow = 0
        var polls = 0
        while emptyPolls < emptyPollsAllowed && polls < emptyPollsAllowed * 10 {
            let started = ContinuousClock.now
            let batch = try await consumer.poll(maxMessages: 1000, timeout: interval)
            polls += 1
            if batch.isEmpty {
                // An error event ends a poll early: an empty poll still spans the interval.
                let spent = ContinuousClock.now - started
                if spent < interval { try await Task.sleep(for: interval - spent) }
                emptyPolls += 1
                emptyInARow += 1
            } else {
                emptyInARow = 0
            }
            records += batch
            if records.count >= count && emptyInARow >= quietPolls { break }
        }
        await consumer.close()
        return records
    }
}
