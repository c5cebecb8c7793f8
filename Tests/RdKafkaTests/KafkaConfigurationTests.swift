import RdKafka
import Testing

/// The typed configurations render exactly these librdkafka properties.
@Suite struct KafkaConfigurationTests {
    let client = KafkaClientSettings(bootstrapServers: ["127.0.0.1:9092", "127.0.0.1:9093"], clientID: "ingest")

    @Test func producerIsIdempotentWithAcksAll() {
        var producer = KafkaProducerConfiguration(client: self.client)
        producer.deliveryTimeout = .seconds(5)
        #expect(
            producer.librdkafkaProperties == [
                "bootstrap.servers": "127.0.0.1:9092,127.0.0.1:9093", "client.id": "ingest",
                "security.protocol": "plaintext", "enable.idempotence": "true", "acks": "all",
                "message.timeout.ms": "5000", "linger.ms": "2",
            ])
    }

    @Test func consumerStoresOffsetsOnlyWhenTold() {
        var consumer = KafkaConsumerConfiguration(client: self.client, groupID: "chain-verifier", topics: ["raw"])
        consumer.sessionTimeout = .seconds(6)
        consumer.heartbeatInterval = .milliseconds(500)
        #expect(
            consumer.librdkafkaProperties == [
                "bootstrap.servers": "127.0.0.1:9092,127.0.0.1:9093", "client.id": "ingest",
                "security.protocol": "plaintext", "group.id": "chain-verifier",
                "enable.auto.commit": "true", "enable.auto.offset.store": "false", "auto.offset.reset": "earliest",
                "session.timeout.ms": "6000", "heartbeat.interval.ms": "500", "max.poll.interval.ms": "300000",
                "fetch.wait.max.ms": "100", "fetch.queue.backoff.ms": "10",
            ])
        #expect(
            KafkaRuntime.librdkafkaVersion.hasPrefix("2.16"),
            "the tests run on librdkafka 2.16, which knows fetch.queue.backoff.ms")
    }

    @Test func additionalPropertiesOverrideTypedOnes() {
        var settings = self.client
        settings.additional = ["linger.ms": "50", "statistics.interval.ms": "1000"]
        let producer = KafkaProducerConfiguration(client: settings)
        #expect(producer.librdkafkaProperties["linger.ms"] == "50")
        #expect(producer.librdkafkaProperties["statistics.interval.ms"] == "1000")
    }

    @Test func aRejectedPropertyIsAConfigurationError() {
        var settings = self.client
        settings.additional = ["no.such.property": "1"]
        do {
            _ = try KafkaProducer(
                configuration: KafkaProducerConfiguration(client: settings), logger: .init(label: "test"))
            Issue.record("an unknown property was accepted")
        } catch {
            #expect(error.code == .configuration)
            #expect(error.reason.contains("no.such.property"))
        }
    }
}
