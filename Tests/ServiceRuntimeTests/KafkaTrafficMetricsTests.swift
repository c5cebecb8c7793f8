import Prometheus
import RdKafka
import ServiceRuntime
import Testing

/// `kafka_records_produced_total` and `kafka_records_consumed_total` count each record once, however often the
/// registry is scraped.
@Suite struct KafkaTrafficMetricsTests {
    @Test func eachScrapeAddsOnlyWhatWasCountedSinceTheLast() {
        let registry = PrometheusCollectorRegistry()
        let traffic = KafkaTraffic()
        for _ in 0..<3 { traffic.produced("appstore.notifications.raw") }
        let record = ConsumerRecord(topic: "appstore.notifications.raw", partition: 0, offset: 1, key: nil, value: nil)
        traffic.consumed([record, record], group: "chain-verifier")
        _ = KafkaTrafficMetrics.emit(registry, traffic: traffic)
        traffic.produced("appstore.notifications.raw")
        traffic.consumed([], group: "chain-verifier")
        let text = String(decoding: KafkaTrafficMetrics.emit(registry, traffic: traffic), as: UTF8.self)
        #expect(text.contains(#"kafka_records_produced_total{topic="appstore.notifications.raw"} 4"#), "\(text)")
        #expect(
            text.contains(
                #"kafka_records_consumed_total{topic="appstore.notifications.raw",group="chain-verifier"} 2"#),
            "\(text)")
        let again = String(decoding: KafkaTrafficMetrics.emit(registry, traffic: traffic), as: UTF8.self)
        #expect(again.contains(#"kafka_records_produced_total{topic="appstore.notifications.raw"} 4"#), "\(again)")
    }
}
