import Metrics
public import Prometheus

/// swift-metrics, pointed at the service's Prometheus registry: what the libraries record through swift-metrics
/// (Hummingbird's request counters and timers, for instance) is served on `/metrics` beside the service's own.
public enum MetricsBootstrap {
    /// A registry for the service, with swift-metrics bootstrapped to it. Once per process, from `main` only (tests
    /// build services with registries of their own and leave the global system alone).
    public static func registry() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }
}
