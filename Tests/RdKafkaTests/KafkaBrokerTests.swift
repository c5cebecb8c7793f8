import Foundation
import Logging
import RdKafka
import TestSupport
import Testing

/// Producer, consumer and admin against a real Kafka-protocol broker (Tansu) on loopback.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct KafkaBrokerTests {
    /// A header the size of Apple's signed payload (the chain-verifier's `apple-signed-payload`), every byte different
    /// from its neighbour.
    static let largeHeader = (0..<19_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }

    let logger = Logger(label: "kafka-test")

    func consumerConfiguration(_ bootstrap: String, group: String, topic: String) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(
            client: KafkaClientSettings(bootstrapServers: [bootstrap]), groupID: group, topics: [topic])
        configuration.sessionTimeout = .seconds(6)
        configuration.heartbeatInterval = .milliseconds(500)
        return configuration
    }

    /// Polls until `count` records arrived or `seconds` of 200 ms polls (counted, not timed: ``Polling``) brought
    /// none.
    func consume(_ consumer: KafkaConsumer, count: Int, within seconds: Double = 30) async throws -> [ConsumerRecord] {
        var records: [ConsumerRecord] = []
        var emptyPolls = 0
        while records.count < count, emptyPolls < Int(seconds * 5) {
            let batch = try await consumer.poll(maxMessages: count - records.count, timeout: .milliseconds(200))
            if batch.isEmpty { emptyPolls += 1 }
            records += batch
        }
        return records
    }

    @Test func producedRecordsArriveWithKeysHeadersAndTombstones() async throws {
        try await withLocalBroker { bootstrap in
            let topic = "records"
            try await KafkaAdmin(settings: KafkaClientSettings(bootstrapServers: [bootstrap]), logger: logger)
                .createTopics([(topic, 3)])
            let producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(client: KafkaClientSettings(bootstrapServers: [bootstrap])),
                logger: logger)
            let sent = [
                ProducerRecord(
                    topic: topic, key: Array("k1".utf8), value: Array("v1".utf8),
                    headers: [
                        KafkaHeader(name: "environment", text: "Sandbox"), KafkaHeader(name: "empty", value: nil),
                        KafkaHeader(name: "blank", value: []), KafkaHeader(name: "large", value: Self.largeHeader),
                    ]),
                ProducerRecord(topic: topic, key: Array("k1".utf8), value: nil),
                ProducerRecord(topic: topic, key: nil, value: [0, 1, 2, 255]),
                ProducerRecord(topic: topic, key: Array("k2".utf8), value: []),
            ]
            var reports: [DeliveryReport] = []
            for record in sent { reports.append(try await producer.send(record)) }
            #expect(reports.allSatisfy { $0.topic == topic && $0.offset >= 0 })
            #expect(reports[0].partition == reports[1].partition, "one key, one partition")
            await producer.shutdown()

            let consumer = try KafkaConsumer(
                configuration: consumerConfiguration(bootstrap, group: "g1", topic: topic), logger: logger)
            let received = try await consume(consumer, count: 4)
            #expect(await consumer.close(), "with the broker up, librdkafka closes (commits and leaves the group)")
            #expect(received.count == 4)
            let first = try #require(received.first { $0.key == Array("k1".utf8) && $0.value != nil })
            #expect(first.value == Array("v1".utf8))
            #expect(first.header("environment")?.text == "Sandbox")
            #expect(first.headers.contains(KafkaHeader(name: "empty", value: nil)))
            #expect(first.headers.contains(KafkaHeader(name: "blank", value: [])), "an empty header is not a null one")
            #expect(first.header("large")?.value == Self.largeHeader, "a header of a signed payload's size, intact")
            #expect(received.contains { $0.key == Array("k1".utf8) && $0.value == nil }, "tombstone")
            #expect(received.contains { $0.key == nil && $0.value == [0, 1, 2, 255] })
            #expect(
                received.contains { $0.key == Array("k2".utf8) && $0.value == [] }, "an empty value is not a tombstone")
        }
    }

    @Test func storedOffsetsAreWhereTheGroupResumes() async throws {
        try await withLocalBroker { bootstrap in
            let topic = "resume"
            try await KafkaAdmin(settings: KafkaClientSettings(bootstrapServers: [bootstrap]), logger: logger)
                .createTopics([(topic, 1)])
            let producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(client: KafkaClientSettings(bootstrapServers: [bootstrap])),
                logger: logger)
            for index in 0..<10 {
                _ = try await producer.send(ProducerRecord(topic: topic, key: nil, value: Array("m\(index)".utf8)))
            }
            await producer.shutdown()

            let first = try KafkaConsumer(
                configuration: consumerConfiguration(bootstrap, group: "g", topic: topic), logger: logger)
            let records = try await consume(first, count: 10)
            #expect(records.count == 10)
            first.storeOffsets(after: Array(records.prefix(6)))  // only the first six were "processed"
            await first.close()

            let second = try KafkaConsumer(
                configuration: consumerConfiguration(bootstrap, group: "g", topic: topic), logger: logger)
            let again = try await consume(second, count: 4)
            let extra = try await second.poll(maxMessages: 10, timeout: .seconds(1))
            await second.close()
            #expect(again.map { String(decoding: $0.value!, as: UTF8.self) } == ["m6", "m7", "m8", "m9"])
            #expect(extra.isEmpty)
        }
    }

    @Test func closingAfterTheBrokerIsGoneReturnsAfterItsTimeout() async throws {
        try await withStoppableLocalBroker { bootstrap, stopBroker in
            let topic = "gone"
            try await KafkaAdmin(settings: KafkaClientSettings(bootstrapServers: [bootstrap]), logger: logger)
                .createTopics([(topic, 1)])
            let producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(client: KafkaClientSettings(bootstrapServers: [bootstrap])),
                logger: logger)
            _ = try await producer.send(ProducerRecord(topic: topic, key: nil, value: [1]))
            await producer.shutdown()
            // Its threads keep dialling the stopped broker after the test (the close never finished): keep them quiet.
            var quiet = logger
            quiet.logLevel = .critical
            // A session far longer than any pause of this process: without a broker, librdkafka's close finishes by
            // itself once the session expires (measured: after 6.0 s with a 6 s session; not within 40 s with 45 s),
            // so with a short session a timer starved past it on a loaded machine saw the close succeed (CI, once).
            var configuration = consumerConfiguration(bootstrap, group: "g-gone", topic: topic)
            configuration.sessionTimeout = .seconds(45)
            configuration.heartbeatInterval = .seconds(1)
            let consumer = try KafkaConsumer(configuration: configuration, logger: quiet)
            let received = try await consume(consumer, count: 1)
            #expect(received.count == 1, "joined the group and consumed")
            consumer.storeOffsets(after: received)
            await stopBroker()
            // Without the timeout this call never returns (librdkafka waits for the broker to commit and leave).
            let closed = await consumer.close(timeout: .seconds(2))
            #expect(!closed, "librdkafka cannot finish closing without a broker")
        }
    }

    /// A fire-and-forget produce learns its outcome without a task awaiting it: the broker's acknowledgement while it
    /// is up, a delivery failure once it is gone and the delivery timeout passed.
    @Test func whenReportedCallsBackWithEachOutcome() async throws {
        try await withStoppableLocalBroker { bootstrap, stopBroker in
            let topic = "reported"
            try await KafkaAdmin(settings: KafkaClientSettings(bootstrapServers: [bootstrap]), logger: logger)
                .createTopics([(topic, 1)])
            var configuration = KafkaProducerConfiguration(client: KafkaClientSettings(bootstrapServers: [bootstrap]))
            configuration.deliveryTimeout = .seconds(2)
            configuration.shutdownFlushTimeout = .milliseconds(100)
            var quiet = logger
            quiet.logLevel = .critical
            let producer = try KafkaProducer(configuration: configuration, logger: quiet)
            let delivered = try await Self.outcome(
                of: producer.enqueue(ProducerRecord(topic: topic, key: nil, value: [1])))
            #expect((try? delivered.get())?.topic == topic, "acknowledged: \(delivered)")
            await stopBroker()
            let lost = try await Self.outcome(of: producer.enqueue(ProducerRecord(topic: topic, key: nil, value: [2])))
            #expect(throws: KafkaError.self, "no broker: the delivery failed") { try lost.get() }
            await producer.shutdown()
        }
    }

    /// `sendQueuedNow()` sends a message that would otherwise wait out its linger: with a linger of five minutes the
    /// message is acknowledged while a race against a one-minute sleep still runs (without the call it could not be).
    /// The linger is set through `KAFKA_PROPERTIES`' way (the client's additional properties), which the cut honours.
    @Test func sendQueuedNowSendsWithoutWaitingForTheLinger() async throws {
        try await withLocalBroker { bootstrap in
            let topic = "lingering"
            try await KafkaAdmin(settings: KafkaClientSettings(bootstrapServers: [bootstrap]), logger: logger)
                .createTopics([(topic, 1)])
            var client = KafkaClientSettings(bootstrapServers: [bootstrap])
            client.additional = ["linger.ms": "300000"]
            var configuration = KafkaProducerConfiguration(client: client)
            configuration.deliveryTimeout = .seconds(600)
            let producer = try KafkaProducer(configuration: configuration, logger: logger)
            let pending = try await producer.enqueue(ProducerRecord(topic: topic, key: nil, value: [7]))
            producer.sendQueuedNow()
            let acknowledged = await withTaskGroup(of: Bool.self) { group in
                group.addTask { (try? await pending.report) != nil }
                group.addTask {
                    try? await Task.sleep(for: .seconds(60))
                    return false
                }
                let first = await group.next()!
                group.cancelAll()
                return first
            }
            #expect(acknowledged, "acknowledged long before the five-minute linger")
            await producer.shutdown()
        }
    }

    /// Waits for ``PendingDelivery/whenReported(_:)``'s call.
    static func outcome(of pending: PendingDelivery) async -> Result<DeliveryReport, KafkaError> {
        await withCheckedContinuation { continuation in
            pending.whenReported { continuation.resume(returning: $0) }
        }
    }

    /// A member's lag is measured from the offset it stored (its durable work), not from what it fetched.
    @Test func lagCountsFromTheStoredOffsetToThePartitionsEnd() async throws {
        try await withLocalBroker { bootstrap in
            let topic = "lagging"
            try await KafkaAdmin(settings: KafkaClientSettings(bootstrapServers: [bootstrap]), logger: logger)
                .createTopics([(topic, 1)])
            try await KafkaTestClient(bootstrapServers: [bootstrap]).produce(
                (0..<10).map { ProducerRecord(topic: topic, key: nil, value: [UInt8($0)]) })
            let consumer = try KafkaConsumer(
                configuration: consumerConfiguration(bootstrap, group: "g-lag", topic: topic), logger: logger)
            let received = try await consume(consumer, count: 10)
            #expect(received.count == 10)
            consumer.storeOffsets(after: Array(received.prefix(4)))
            #expect(consumer.assignment().lags == [.init(topic: topic, partition: 0, messages: 6)])
            consumer.storeOffsets(after: received)
            #expect(consumer.assignment().lags == [.init(topic: topic, partition: 0, messages: 0)])
            #expect(consumer.assignment().partitions == 1, "it holds the topic's one partition")
            await consumer.close()
        }
    }

    @Test func creatingTopicsTwiceIsHarmless() async throws {
        try await withLocalBroker { bootstrap in
            let admin = KafkaAdmin(settings: KafkaClientSettings(bootstrapServers: [bootstrap]), logger: logger)
            let created = try await admin.createTopics([("a", 2), ("b", 4)])
            #expect(Set(created) == ["a", "b"])
            #expect(try await admin.createTopics([("a", 2)]).isEmpty)
        }
    }

    /// The local scripts' topic reader (`deploy/local/topic_reader.py`, behind `show-topics.py` and the demo's
    /// summary) reads a partition to its end when its last batch holds many records: Tansu answers a ListOffsets
    /// query with that batch's first offset + 1, which read 668 of 1,000 such records before.
    @Test func theLocalTopicReaderReadsTheWholeLastBatch() async throws {
        try await withLocalBroker { bootstrap in
            let topic = "one-batch"
            try await KafkaAdmin(settings: KafkaClientSettings(bootstrapServers: [bootstrap]), logger: logger)
                .createTopics([(topic, 1)])
            let producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(client: KafkaClientSettings(bootstrapServers: [bootstrap])),
                logger: logger)
            // Enqueued together, they leave in one batch (or a few): the partition's last batch holds many.
            var pending: [PendingDelivery] = []
            for index in 0..<50 {
                pending.append(
                    try await producer.enqueue(
                        ProducerRecord(topic: topic, key: Array("k".utf8), value: Array("record \(index)".utf8))))
            }
            for delivery in pending { _ = try await delivery.report }
            await producer.shutdown()
            let (status, output) = try await LocalComponents.python(
                "deploy/local/show-topics.py", [bootstrap, topic])
            #expect(status == 0)
            #expect(output.contains("\(topic): 50 message(s)"), "show-topics printed: \(output.prefix(300))")
        }
    }

    @Test func theRuntimeIsNewEnoughForTansu() throws {
        // The loaded librdkafka, not the headers the wrapper was built against: Tansu needs 2.2 or newer.
        let parts = KafkaRuntime.librdkafkaVersion.split(separator: ".").compactMap { Int($0) }
        #expect(
            parts.count >= 2 && (parts[0], parts[1]) >= (2, 2), "librdkafka \(KafkaRuntime.librdkafkaVersion) is loaded"
        )
    }
}
