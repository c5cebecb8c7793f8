import Prometheus
import Testing

@testable import EntitlementUpdater

/// Freshness (`entitlement_updater_newest_applied_signed_date_seconds`): the newest signedDate applied, which only
/// moves forward, so a replayed old notification does not make the pipeline look stale (or fresh).
@Suite struct FreshnessMetricTests {
    static func value(_ registry: PrometheusCollectorRegistry) -> String? {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("entitlement_updater_newest_applied_signed_date_seconds ") }
            .map { String($0.split(separator: " ")[1]) }
    }

    @Test func theNewestSignedDateOnlyMovesForward() {
        let registry = PrometheusCollectorRegistry()
        let freshness = NewestAppliedNotification(registry: registry)
        freshness.observe([1_700_000_000_000, 1_700_000_005_500])
        #expect(Self.value(registry) == "1700000005.5")
        freshness.observe([1_600_000_000_000])
        #expect(Self.value(registry) == "1700000005.5", "an old notification applied late")
        freshness.observe([])
        freshness.observe([1_700_000_010_000])
        #expect(Self.value(registry) == "1700000010.0")
    }
}
