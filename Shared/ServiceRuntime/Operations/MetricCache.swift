import Synchronization

/// Metrics by their label values, each made once. A registry's `make…` builds the metric's name and looks it up under
/// the registry's lock on every call; on a request path that was about 1 % of a service's CPU. At most `capacity`
/// are kept (label values come from fixed sets; past it, a metric is made each time, as before).
final class MetricCache<Metric: Sendable>: Sendable {
    private let metrics = Mutex<[String: Metric]>([:])
    private let capacity: Int

    init(capacity: Int = 1024) {
        self.capacity = capacity
    }

    /// The metric of `key`, made by `make` the first time.
    func metric(_ key: String, make: () -> Metric) -> Metric {
        if let metric = self.metrics.withLock({ $0[key] }) { return metric }
        let metric = make()
        self.metrics.withLock { metrics in
            if metrics.count < self.capacity { metrics[key] = metric }
        }
        return metric
    }
}
