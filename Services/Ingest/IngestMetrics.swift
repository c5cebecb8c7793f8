import Prometheus
import ServiceRuntime

/// Ingest's metrics: requests by outcome, produce latency, requests in flight, records sent without lingering.
struct IngestMetrics: Sendable {
    private let requests: LabelledCounter
    /// Time from handing the body to librdkafka to the broker's acknowledgement.
    let produceLatency: DurationHistogram
    /// Requests being handled now.
    let inFlight: Gauge
    /// Records sent without waiting for the producer's linger, their request being the only one in flight.
    let sentAtOnce: Counter

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
        self.sentAtOnce = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "ingest", metricName: "records_sent_at_once", unitName: "total",
                helpText: "Records sent without waiting for the producer's linger: their request was alone in flight"))
    }

    /// Counts a request by outcome (`accepted`, a rejection code, `unavailable`).
    func count(outcome: String) {
        self.requests.increment(outcome)
    }
}
