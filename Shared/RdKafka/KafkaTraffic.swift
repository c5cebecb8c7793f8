import Synchronization

/// How many records this process's Kafka clients handed to each topic and took from each (topic, group): the
/// figures behind `kafka_records_produced_total` and `kafka_records_consumed_total`, which show which topics a
/// service really uses (a test compares them with the topic-access table the ACLs are made from). One tally per
/// process: a process is one service, and every producer and consumer in it adds here.
public final class KafkaTraffic: Sendable {
    /// One (topic, group) pair a consumer read from; the group is empty for a producer's topic.
    public struct Use: Sendable, Hashable, Comparable {
        public var topic: String
        public var group: String

        /// A topic, with the consumer group that read it (or none).
        public init(topic: String, group: String = "") {
            self.topic = topic
            self.group = group
        }

        public static func < (a: Use, b: Use) -> Bool { (a.topic, a.group) < (b.topic, b.group) }
    }

    /// The counts so far.
    public struct Counts: Sendable, Hashable {
        /// Records enqueued per topic (counted when handed to librdkafka: an ACL would refuse them there).
        public var produced: [String: Int] = [:]
        /// Records polled per topic and consumer group.
        public var consumed: [Use: Int] = [:]

        /// No records yet.
        public init() {}
    }

    /// This process's tally.
    public static let process = KafkaTraffic()

    private let counts = Mutex(Counts())

    /// An empty tally (tests make their own; services use ``process``).
    public init() {}

    /// Adds one record handed to librdkafka for a topic.
    public func produced(_ topic: String) {
        self.counts.withLock { $0.produced[topic, default: 0] += 1 }
    }

    /// Adds a polled batch, per topic, for a consumer group.
    public func consumed(_ records: [ConsumerRecord], group: String) {
        guard !records.isEmpty else { return }
        var batch: [String: Int] = [:]
        for record in records { batch[record.topic, default: 0] += 1 }
        self.counts.withLock { counts in
            for (topic, count) in batch { counts.consumed[Use(topic: topic, group: group), default: 0] += count }
        }
    }

    /// The counts so far.
    public var snapshot: Counts { self.counts.withLock { $0 } }
}
