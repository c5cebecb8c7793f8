public import Prometheus

/// A Prometheus counter family with one label, e.g. `ingest_requests_total{outcome="accepted"}`.
public struct LabelledCounter: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let namespace: String
    private let name: String
    private let label: String
    private let help: String
    private let counters = MetricCache<Counter>()

    /// Declares `<namespace>_<name>_total{<label>=…}` in a registry.
    public init(registry: PrometheusCollectorRegistry, namespace: String, name: String, label: String, help: String) {
        self.registry = registry
        self.namespace = namespace
        self.name = name
        self.label = label
        self.help = help
    }

    /// Adds `amount` (default one) to the counter of a label value.
    public func increment(_ value: String, by amount: Int = 1) {
        let counter = self.counters.metric(value) {
            let descriptor = MetricNameDescriptor(
                namespace: self.namespace, metricName: self.name, unitName: "total", helpText: self.help)
            return self.registry.makeCounter(descriptor: descriptor, labels: [(self.label, value)])
        }
        counter.increment(by: Int64(amount))
    }
}
