public import Prometheus
import Synchronization

/// A Prometheus counter family with one label, e.g. `ingest_requests_total{outcome="accepted"}`.
public struct LabelledCounter: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let namespace: String
    private let name: String
    private let label: String
    private let help: String
    /// The counters made so far, by label value (making one builds its name and looks it up in the registry).
    private let counters = CounterCache()

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
        self.counter(value).increment(by: Int64(amount))
    }

    /// The counter of a label value, made in the registry the first time.
    private func counter(_ value: String) -> Counter {
        if let known = self.counters.byValue.withLock({ $0[value] }) { return known }
        let descriptor = MetricNameDescriptor(namespace: self.namespace, metricName: self.name, unitName: "total", helpText: self.help)
        let counter = self.registry.makeCounter(descriptor: descriptor, labels: [(self.label, value)])
        self.counters.byValue.withLock { $0[value] = counter }
        return counter
    }
}

/// A ``LabelledCounter``'s counters by label value, shared by its copies.
private final class CounterCache: Sendable {
    let byValue = Mutex<[String: Counter]>([:])
}
