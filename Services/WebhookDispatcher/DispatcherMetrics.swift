import Prometheus
import ServiceRuntime

/// The dispatcher's metrics: events queued, attempts by result, event → delivery time, endpoints disabled, and the
/// backlog (pending deliveries, the oldest one's age).
struct DispatcherMetrics: Sendable {
    /// Deliveries queued from consumed events (`queued`), records that were not events (`unreadable`).
    let queued: LabelledCounter
    /// Attempts by result: `delivered`, `failed` (retried), `gone` (410).
    let attempts: LabelledCounter
    /// From the event's publication to its delivery's 2xx.
    let eventToDelivery: DurationHistogram
    /// Endpoints this replica disabled, by why (`gone`, `horizon`).
    let disabled: LabelledCounter
    /// Deliveries not yet acknowledged, all endpoints (read every 15 s).
    let pending: Gauge
    /// Age in seconds of the oldest pending delivery.
    let oldestPending: Gauge

    init(registry: PrometheusCollectorRegistry) {
        self.queued = LabelledCounter(
            registry: registry, namespace: "webhook_dispatcher", name: "events", label: "result",
            help: "Events consumed: deliveries queued, or records that were not events")
        self.attempts = LabelledCounter(
            registry: registry, namespace: "webhook_dispatcher", name: "attempts", label: "result",
            help: "Delivery attempts by result")
        self.eventToDelivery = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "webhook_dispatcher", metricName: "event_to_delivery", unitName: "seconds",
                helpText: "Time from an event's publication to its delivery's 2xx"),
            buckets: [
                .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
                .milliseconds(500), .seconds(1), .seconds(5), .seconds(30), .seconds(300), .seconds(3600),
            ])
        self.disabled = LabelledCounter(
            registry: registry, namespace: "webhook_dispatcher", name: "endpoints_disabled", label: "reason",
            help: "Endpoints disabled (410 Gone, or failing for the retry horizon)")
        self.pending = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "webhook_dispatcher", metricName: "pending_deliveries", unitName: "",
                helpText: "Deliveries not yet acknowledged"))
        self.oldestPending = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "webhook_dispatcher", metricName: "oldest_pending_age", unitName: "seconds",
                helpText: "Age of the oldest delivery not yet acknowledged"))
    }
}
