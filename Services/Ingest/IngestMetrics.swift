import Prometheus
import ServiceRuntime

/// Ingest's metrics: requests by outcome, produce latency, requests in flight.
struct IngestMetrics: Sendable {
    private let requests: LabelledCounter
    /// Time from handing the body to librdkafka to the broker's acknowledgement.
    let produceLatency: DurationHistogram
    /// Requests being handled now.
    let inFlight: Gauge

    init(registry: PrometheusCollectorRegistry) {
        self.requests = LabelledCounter(
            registry: registry, namespace: "ingest", name: "requests", label: "outcome",
            help: "Notification requests by outcome")
        self.produceLatency = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "ingest", metricName: "produce_duration", unitName: "seconds",
                helpText: "Time from enqueueing a notification to the broker's acknowledgement"),
            buckets: [
                .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
                .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
            ])
        self.inFlight = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "ingest", metricName: "requests_in_flight", unitName: "", helpText: "Requests being handled")
        )
    }

    /// Counts a request by outcome (`accepted`, a rejection code, `unavailable`).
    func count(outcome: String) {
        self.requests.increment(outcome)
    }
}
