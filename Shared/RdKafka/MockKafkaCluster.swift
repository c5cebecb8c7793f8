import CRdKafka
import Logging

/// librdkafka's in-process mock cluster, for fault injection in tests: brokers that go down and come back
/// with their data, and request errors. Not for volume (about 5 MB per partition).
public final class MockKafkaCluster: @unchecked Sendable {
    private let owner: RdKafkaClient
    private let cluster: OpaquePointer

    /// Starts a cluster of `brokers` brokers (ids 1…n).
    public init(brokers: Int = 1, logger: Logger = Logger(label: "mock-kafka")) throws(KafkaError) {
        self.owner = try RdKafkaClient(type: RD_KAFKA_PRODUCER, properties: [:], logger: logger)
        guard let cluster = rd_kafka_mock_cluster_new(self.owner.handle, Int32(brokers)) else {
            throw KafkaError(.client, "could not start the mock cluster")
        }
        self.cluster = cluster
    }

    deinit {
        rd_kafka_mock_cluster_destroy(self.cluster)
    }

    /// The cluster's bootstrap servers.
    public var bootstrapServers: [String] {
        String(cString: rd_kafka_mock_cluster_bootstraps(self.cluster)).split(separator: ",").map(String.init)
    }

    /// Creates a topic (the mock cluster has no admin API).
    public func createTopic(_ name: String, partitions: Int) throws(KafkaError) {
        let result = rd_kafka_mock_topic_create(self.cluster, name, Int32(partitions), 1)
        guard result == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(.admin, "mock topic \(name)", responseError: result)
        }
    }

    /// Takes a broker down (connections closed and refused) or brings it back.
    public func setBroker(_ id: Int32, up: Bool) {
        _ = up ? rd_kafka_mock_broker_set_up(self.cluster, id) : rd_kafka_mock_broker_set_down(self.cluster, id)
    }
}
