import CRdKafka
import Dispatch
import Logging

/// A topic to create: its partitions, replication and topic-level configuration (e.g. `retention.ms`,
/// `min.insync.replicas`).
public struct KafkaTopicSpecification: Sendable, Hashable {
    public var name: String
    public var partitions: Int
    /// Copies of each partition; nil: the broker's default.
    public var replicationFactor: Int?
    /// Topic configuration set at creation.
    public var configuration: [String: String]

    /// Creates a specification.
    public init(name: String, partitions: Int, replicationFactor: Int? = nil, configuration: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.configuration = configuration
    }
}

/// Creates topics. A topic that already exists counts as created, so setup can run again.
public struct KafkaAdmin: Sendable {
    private let settings: KafkaClientSettings
    private let logger: Logger

    /// Creates an admin for the brokers.
    public init(settings: KafkaClientSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    /// Creates each topic with its partition count (replication and configuration: the broker's defaults).
    ///
    /// - Returns: the topics that were created now (not those that existed).
    @discardableResult
    public func createTopics(_ topics: [(name: String, partitions: Int)], timeout: Duration = .seconds(30))
        async throws(KafkaError) -> [String]
    {
        try await self.createTopics(
            topics.map { KafkaTopicSpecification(name: $0.name, partitions: $0.partitions) }, timeout: timeout)
    }

    /// Creates each topic as specified; an existing topic is left as it is.
    ///
    /// - Returns: the topics that were created now (not those that existed).
    @discardableResult
    public func createTopics(_ topics: [KafkaTopicSpecification], timeout: Duration = .seconds(30))
        async throws(KafkaError) -> [String]
    {
        let settings = self.settings
        let logger = self.logger
        let result: Result<[String], KafkaError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    returning: Result { () throws(KafkaError) -> [String] in
                        try Self.create(topics, settings: settings, timeout: timeout, logger: logger)
                    })
            }
        }
        return try result.get()
    }

    /// The blocking request and its result.
    private static func create(
        _ topics: [KafkaTopicSpecification], settings: KafkaClientSettings, timeout: Duration, logger: Logger
    ) throws(KafkaError) -> [String] {
        let properties = settings.baseProperties.merging(settings.additional) { _, override in override }
        let client = try RdKafkaClient(type: RD_KAFKA_PRODUCER, properties: properties, logger: logger)
        let queue = rd_kafka_queue_new(client.handle)
        defer { rd_kafka_queue_destroy(queue) }
        var errorText = [CChar](repeating: 0, count: 512)
        var newTopics: [OpaquePointer?] = []
        defer { newTopics.forEach { rd_kafka_NewTopic_destroy($0) } }
        for topic in topics {
            guard
                let newTopic = rd_kafka_NewTopic_new(
                    topic.name, Int32(topic.partitions), Int32(topic.replicationFactor ?? -1), &errorText,
                    errorText.count)
            else {
                throw KafkaError(.admin, "topic \(topic.name): \(String(cBuffer: errorText))")
            }
            newTopics.append(newTopic)
            for (name, value) in topic.configuration.sorted(by: { $0.key < $1.key }) {
                let error = rd_kafka_NewTopic_set_config(newTopic, name, value)
                guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                    throw KafkaError(.admin, "topic \(topic.name) config \(name)", responseError: error)
                }
            }
        }
        let options = rd_kafka_AdminOptions_new(client.handle, RD_KAFKA_ADMIN_OP_CREATETOPICS)
        defer { rd_kafka_AdminOptions_destroy(options) }
        rd_kafka_AdminOptions_set_operation_timeout(
            options, Int32(clamping: timeout.milliseconds), &errorText, errorText.count)
        newTopics.withUnsafeMutableBufferPointer {
            rd_kafka_CreateTopics(client.handle, $0.baseAddress, $0.count, options, queue)
        }
        // A refused TLS handshake or SASL exchange is retried by librdkafka until the timeout; the error names it.
        let lastFailure = { client.lastConnectionFailure.map { " (last connection failure: \($0))" } ?? "" }
        guard let event = rd_kafka_queue_poll(queue, Int32(clamping: timeout.milliseconds + 5000)) else {
            throw KafkaError(.timeout, "no answer to CreateTopics in time\(lastFailure())", isRetriable: true)
        }
        defer { rd_kafka_event_destroy(event) }
        let eventError = rd_kafka_event_error(event)
        guard eventError == RD_KAFKA_RESP_ERR_NO_ERROR, let result = rd_kafka_event_CreateTopics_result(event) else {
            throw KafkaError(.admin, "CreateTopics\(lastFailure())", responseError: eventError)
        }
        var count = 0
        let results = rd_kafka_CreateTopics_result_topics(result, &count)
        var created: [String] = []
        for index in 0..<count {
            let topicResult = results![index]
            let name = String(cString: rd_kafka_topic_result_name(topicResult))
            let error = rd_kafka_topic_result_error(topicResult)
            switch error {
            case RD_KAFKA_RESP_ERR_NO_ERROR: created.append(name)
            case RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS: break
            default: throw KafkaError(.admin, "create topic \(name)", responseError: error)
            }
        }
        return created
    }
}
