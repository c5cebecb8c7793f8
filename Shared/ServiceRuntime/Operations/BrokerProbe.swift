public import RdKafka

extension DependencyProbe.Check {
    /// A broker answers the producer's metadata request within a second.
    public static func broker(_ producer: KafkaProducer) -> Self {
        Self("broker") { await producer.isBrokerReachable(timeout: .seconds(1)) }
    }
}
