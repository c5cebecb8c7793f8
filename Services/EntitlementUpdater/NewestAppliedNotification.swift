import Prometheus
import Synchronization

/// Freshness: `entitlement_updater_newest_applied_signed_date_seconds`, Apple's `signedDate` of the newest
/// notification this replica has committed. Its age (`time() - max(…)`) is how far behind Apple the entitlements
/// are; the alert EntitlementsStale fires above 15 minutes while ingest keeps accepting. It only moves forward:
/// an old notification applied late (a replay) does not make the pipeline look stale.
final class NewestAppliedNotification: Sendable {
    private let gauge: Gauge
    private let newest = Mutex<Int64>(0)

    /// Declares the gauge in a registry.
    init(registry: PrometheusCollectorRegistry) {
        self.gauge = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "entitlement_updater", metricName: "newest_applied_signed_date", unitName: "seconds",
                helpText: "Apple's signedDate of the newest notification applied (Unix seconds)"))
    }

    /// Takes the signed dates (epoch ms) of notifications just committed.
    func observe(_ signedDates: [Int64]) {
        guard let latest = signedDates.max() else { return }
        let moved = self.newest.withLock { newest -> Bool in
            guard latest > newest else { return false }
            newest = latest
            return true
        }
        if moved { self.gauge.set(to: Double(latest) / 1000) }
    }
}
