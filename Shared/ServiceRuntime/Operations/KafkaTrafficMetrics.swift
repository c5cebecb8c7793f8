public import Prometheus
public import RdKafka
import Synchronization

/// `kafka_records_produced_total{topic}` and `kafka_records_consumed_total{topic,group}`: the process's
/// ``KafkaTraffic`` brought into a registry when it is scraped (the Kafka clients only count; a scrape adds what
/// was counted since the last one), so an operator sees which topics a service really writes and reads.
public enum KafkaTrafficMetrics {
    /// What was already added to each registry's counters, per metric line.
    private static let exported = Mutex<[ObjectIdentifier: KafkaTraffic.Counts]>([:])

    /// Adds to the registry's counters what `traffic` (the process's tally unless a test names one) counted since
    /// the last call, then emits the registry in the Prometheus text format.
    public static func emit(_ registry: PrometheusCollectorRegistry, traffic: KafkaTraffic = .process) -> [UInt8] {
        Self.export(traffic, to: registry)
        return registry.emitToBuffer()
    }

    /// Adds to the registry's counters the difference between the tally now and what was exported to it before
    /// (the snapshot is taken under the lock, so two scrapes at once never add the same records twice).
    static func export(_ traffic: KafkaTraffic, to registry: PrometheusCollectorRegistry) {
        let (before, counts) = Self.exported.withLock { exported in
            let counts = traffic.snapshot
            defer { exported[ObjectIdentifier(registry)] = counts }
            return (exported[ObjectIdentifier(registry)] ?? KafkaTraffic.Counts(), counts)
        }
        let produced = MetricNameDescriptor(
            namespace: "kafka", metricName: "records_produced", unitName: "total",
            helpText: "Records this process handed to librdkafka, by topic")
        for (topic, count) in counts.produced where count > before.produced[topic, default: 0] {
            registry.makeCounter(descriptor: produced, labels: [("topic", topic)])
                .increment(by: Int64(count - before.produced[topic, default: 0]))
        }
        let consumed = MetricNameDescriptor(
            namespace: "kafka", metricName: "records_consumed", unitName: "total",
            helpText: "Records this process polled, by topic and consumer group")
        for (use, count) in counts.consumed where count > before.consumed[use, default: 0] {
            registry.makeCounter(descriptor: consumed, labels: [("topic", use.topic), ("group", use.group)])
                .increment(by: Int64(count - before.consumed[use, default: 0]))
        }
    }
}
