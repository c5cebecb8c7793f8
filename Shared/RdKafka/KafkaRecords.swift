/// A Kafka message header. A header may have no value.
public struct KafkaHeader: Hashable, Sendable {
    public var name: String
    public var value: [UInt8]?

    /// Creates a header with a byte value.
    public init(name: String, value: [UInt8]?) {
        self.name = name
        self.value = value
    }

    /// Creates a header with a UTF-8 text value.
    public init(name: String, text: String) {
        self.init(name: name, value: Array(text.utf8))
    }

    /// The value as UTF-8 text.
    public var text: String? { self.value.map { String(decoding: $0, as: UTF8.self) } }
}

/// A message to produce.
public struct ProducerRecord: Sendable {
    public var topic: String
    public var key: [UInt8]?
    /// The value; nil produces a tombstone.
    public var value: [UInt8]?
    public var headers: [KafkaHeader]

    /// Creates a record.
    public init(topic: String, key: [UInt8]?, value: [UInt8]?, headers: [KafkaHeader] = []) {
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = headers
    }
}

/// Where the broker stored a produced message.
public struct DeliveryReport: Hashable, Sendable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
}

/// A consumed message, copied out of librdkafka.
public struct ConsumerRecord: Hashable, Sendable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    public var key: [UInt8]?
    /// The value; nil for a tombstone.
    public var value: [UInt8]?
    public var headers: [KafkaHeader]
    /// The message timestamp in milliseconds since 1970, when the broker gave one.
    public var timestamp: Int64?

    /// Creates a record (tests and tools; consumers get them from ``KafkaConsumer/poll(maxMessages:timeout:)``).
    public init(
        topic: String, partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8]?,
        headers: [KafkaHeader] = [], timestamp: Int64? = nil
    ) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }

    /// The first header with this name.
    public func header(_ name: String) -> KafkaHeader? {
        self.headers.first { $0.name == name }
    }
}
