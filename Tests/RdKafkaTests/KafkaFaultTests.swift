import Foundation
import Logging
import RdKafka
import Testing

/// Broker outages injected with librdkafka's in-process mock cluster.
@Suite(.timeLimit(.minutes(2))) struct KafkaFaultTests {
    let logger = Logger(label: "kafka-fault-test")

    func producer(_ cluster: MockKafkaCluster, deliveryTimeout: Duration) throws -> KafkaProducer {
        var configuration = KafkaProducerConfiguration(
            client: KafkaClientSettings(bootstrapServers: cluster.bootstrapServers))
        configuration.deliveryTimeout = deliveryTimeout
        return try KafkaProducer(configuration: configuration, logger: logger)
    }

    @Test func aMessageTheBrokerNeverAcknowledgesFailsAsRetriable() async throws {
        let cluster = try MockKafkaCluster()
        try cluster.createTopic("t", partitions: 1)
        let producer = try self.producer(cluster, deliveryTimeout: .seconds(2))
        _ = try await producer.send(ProducerRecord(topic: "t", key: nil, value: [1]))  // connected and working
        cluster.setBroker(1, up: false)
        do {
            _ = try await producer.send(ProducerRecord(topic: "t", key: nil, value: [2]))
            Issue.record("a message was acknowledged by a broker that is down")
        } catch let error as KafkaError {
            #expect(error.code == .delivery)
            #expect(error.isRetriable)
        }
        await producer.shutdown()
    }

    @Test func aMessageSentWhileTheBrokerIsDownIsDeliveredWhenItReturns() async throws {
        let cluster = try MockKafkaCluster()
        try cluster.createTopic("t", partitions: 1)
        let producer = try self.producer(cluster, deliveryTimeout: .seconds(20))
        _ = try await producer.send(ProducerRecord(topic: "t", key: nil, value: [1]))
        cluster.setBroker(1, up: false)
        async let report = producer.send(ProducerRecord(topic: "t", key: nil, value: [2]))
        try await Task.sleep(for: .seconds(1))
        cluster.setBroker(1, up: true)
        #expect(try await report.offset == 1)
        await producer.shutdown()
    }

    @Test func sendingAfterShutdownFails() async throws {
        let cluster = try MockKafkaCluster()
        try cluster.createTopic("t", partitions: 1)
        let producer = try self.producer(cluster, deliveryTimeout: .seconds(5))
        await producer.shutdown()
        await #expect(throws: KafkaError.self) {
            try await producer.send(ProducerRecord(topic: "t", key: nil, value: [1]))
        }
    }
}
