import Prometheus
import RdKafka
import ServiceRuntime
import Testing

/// `kafka_consumer_lag_messages{group,topic,partition}`: a member's lags, and 0 for a partition it lost (its new
/// owner reports it), so summing by group counts each partition once; and how many partitions the member holds.
@Suite struct ConsumerLagMetricTests {
    static func lines(_ registry: PrometheusCollectorRegistry) -> [String] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self).split(separator: "\n").map(String.init)
            .filter {
                $0.hasPrefix("kafka_consumer_lag_messages{") || $0.hasPrefix("kafka_consumer_assigned_partitions{")
            }
            .sorted()
    }

    @Test func lagsAreReportedAndALostPartitionDropsToZero() {
        let registry = PrometheusCollectorRegistry()
        let metric = ConsumerLagMetric(registry: registry, group: "entitlement-updater")
        metric.report(
            .init(
                partitions: 2,
                lags: [
                    .init(topic: "appstore.notifications.verified", partition: 0, messages: 7),
                    .init(topic: "appstore.notifications.verified", partition: 3, messages: 0),
                ]))
        #expect(
            Self.lines(registry) == [
                #"kafka_consumer_assigned_partitions{group="entitlement-updater"} 2.0"#,
                #"kafka_consumer_lag_messages{group="entitlement-updater",topic="appstore.notifications.verified",partition="0"} 7.0"#,
                #"kafka_consumer_lag_messages{group="entitlement-updater",topic="appstore.notifications.verified",partition="3"} 0.0"#,
            ])
        metric.report(
            .init(partitions: 1, lags: [.init(topic: "appstore.notifications.verified", partition: 3, messages: 12)]))
        #expect(
            Self.lines(registry) == [
                #"kafka_consumer_assigned_partitions{group="entitlement-updater"} 1.0"#,
                #"kafka_consumer_lag_messages{group="entitlement-updater",topic="appstore.notifications.verified",partition="0"} 0.0"#,
                #"kafka_consumer_lag_messages{group="entitlement-updater",topic="appstore.notifications.verified",partition="3"} 12.0"#,
            ])
    }
}
