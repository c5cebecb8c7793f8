import Prometheus
import RdKafka
import ServiceRuntime
import Testing

/// `kafka_consumer_lag_messages{group,topic,partition}`: a member's lags, and 0 for a partition it lost (its new
/// owner reports it), so summing by group counts each partition once; how many partitions the member holds; and the
/// gaps it met, counted once each however often the totals are reported.
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

    @Test func gapsAreCountedByOutcomeOnceEach() {
        let registry = PrometheusCollectorRegistry()
        let metric = ConsumerLagMetric(registry: registry, group: "chain-verifier")
        func gapLines() -> [String] {
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return String(decoding: buffer, as: UTF8.self).split(separator: "\n").map(String.init)
                .filter { $0.hasPrefix("kafka_consumer_offset_gaps_total{") }.sorted()
        }
        let none = KafkaConsumer.Assignment(partitions: 1, lags: [])
        metric.report(none)
        #expect(
            gapLines() == [
                #"kafka_consumer_offset_gaps_total{group="chain-verifier",outcome="accepted"} 0"#,
                #"kafka_consumer_offset_gaps_total{group="chain-verifier",outcome="filled"} 0"#,
                #"kafka_consumer_offset_gaps_total{group="chain-verifier",outcome="seen"} 0"#,
            ], "a group that never met a gap shows zeros")
        metric.report(none, gaps: .init(seen: 2, filled: 1))
        metric.report(none, gaps: .init(seen: 2, filled: 1))
        metric.report(none, gaps: .init(seen: 3, filled: 2, accepted: 1))
        #expect(
            gapLines() == [
                #"kafka_consumer_offset_gaps_total{group="chain-verifier",outcome="accepted"} 1"#,
                #"kafka_consumer_offset_gaps_total{group="chain-verifier",outcome="filled"} 2"#,
                #"kafka_consumer_offset_gaps_total{group="chain-verifier",outcome="seen"} 3"#,
            ])
    }
}
