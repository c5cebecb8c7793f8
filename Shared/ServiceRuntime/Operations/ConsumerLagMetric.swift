public import Prometheus
public import RdKafka
import Synchronization

/// `kafka_consumer_lag_messages{group,topic,partition}`: how far a consumer group member's durable work is behind
/// each partition it owns, as its own client sees it (the alert ConsumerLagHigh and the dashboard sum it by group;
/// KEDA measures the same lag from the broker's side). A partition the member no longer owns is set to 0, so the
/// sum over replicas counts each partition once. Beside it `kafka_consumer_assigned_partitions{group}`: how many
/// partitions the member holds (0 until it has joined its group; 0 for a replica beyond the partition count). And
/// `kafka_consumer_offset_gaps_total{group,outcome}`: records that came after a gap in their partition (`seen`, each
/// read again), gaps whose records then arrived (`filled`) and gaps accepted after 5 s (`accepted`: records the
/// group never saw; the alert KafkaRecordsSkipped).
public final class ConsumerLagMetric: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let group: String
    /// The partitions reported so far.
    private let reported = Mutex<Set<String>>([])
    /// The member's gap counts at the last report.
    private let reportedGaps = Mutex(KafkaConsumer.GapCounts())

    /// Declares the gauges of a consumer group in a registry.
    public init(registry: PrometheusCollectorRegistry, group: String) {
        self.registry = registry
        self.group = group
    }

    /// Sets the gauges to a member's current assignment (the number of partitions it holds and their lags) and counts
    /// the gaps it met since the last report (`gaps`: the member's totals so far).
    public func report(_ assignment: KafkaConsumer.Assignment, gaps: KafkaConsumer.GapCounts = .init()) {
        let previous = self.reportedGaps.withLock { reported in
            defer { reported = gaps }
            return reported
        }
        for (outcome, added) in [
            ("seen", gaps.seen - previous.seen), ("filled", gaps.filled - previous.filled),
            ("accepted", gaps.accepted - previous.accepted),
        ] {
            // Declared at the first report, so a group that never met a gap shows 0 rather than nothing.
            self.gapCounter(outcome: outcome).increment(by: Int64(max(0, added)))
        }
        self.assignedGauge.set(to: Double(assignment.partitions))
        var current: [String: (topic: String, partition: String, messages: Int64)] = [:]
        for lag in assignment.lags {
            current["\(lag.topic)/\(lag.partition)"] = (lag.topic, String(lag.partition), lag.messages)
        }
        let gone = self.reported.withLock { reported -> [String] in
            let gone = reported.subtracting(current.keys)
            reported = Set(current.keys)
            return Array(gone)
        }
        for (_, lag) in current {
            self.gauge(topic: lag.topic, partition: lag.partition).set(to: Double(lag.messages))
        }
        for key in gone {
            let parts = key.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            self.gauge(topic: parts[0], partition: parts[1]).set(to: 0.0)
        }
    }

    /// The member's count of assigned partitions.
    private var assignedGauge: Gauge {
        self.registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "kafka_consumer", metricName: "assigned", unitName: "partitions",
                helpText: "Partitions this member holds now"),
            labels: [("group", self.group)])
    }

    /// The counter of gaps with one outcome.
    private func gapCounter(outcome: String) -> Counter {
        self.registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "kafka_consumer", metricName: "offset_gaps", unitName: "total",
                helpText: "Records after a gap in their partition: seen (read again), filled, accepted (never seen)"),
            labels: [("group", self.group), ("outcome", outcome)])
    }

    /// The gauge of one partition.
    private func gauge(topic: String, partition: String) -> Gauge {
        self.registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "kafka_consumer", metricName: "lag", unitName: "messages",
                helpText: "Messages between this member's stored offset and the partition's end"),
            labels: [("group", self.group), ("topic", topic), ("partition", partition)])
    }
}
