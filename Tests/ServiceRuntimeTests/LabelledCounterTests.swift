import Prometheus
import ServiceRuntime
import Testing

/// A labelled counter counts per label value, and can be printed: ServiceGroup logs every service with
/// `String(describing:)`, which reflects into the service's stored properties, counters included.
@Suite struct LabelledCounterTests {
    /// A service-like value holding counters, as the services do.
    struct Holder {
        let name = "holder"
        let requests: LabelledCounter
        let calls: LabelledCounter
    }

    @Test func countsPerLabelValueAcrossCopies() {
        let registry = PrometheusCollectorRegistry()
        let counter = LabelledCounter(
            registry: registry, namespace: "test", name: "requests", label: "outcome", help: "Requests")
        let copy = counter
        counter.increment("accepted")
        copy.increment("accepted", by: 2)
        counter.increment("refused")
        var exposition: [UInt8] = []
        registry.emit(into: &exposition)
        let text = String(decoding: exposition, as: UTF8.self)
        #expect(text.contains(#"test_requests_total{outcome="accepted"} 3"#), "\(text)")
        #expect(text.contains(#"test_requests_total{outcome="refused"} 1"#), "\(text)")
    }

    @Test func aValueHoldingCountersCanBePrinted() {
        let registry = PrometheusCollectorRegistry()
        let holder = Holder(
            requests: LabelledCounter(
                registry: registry, namespace: "test", name: "requests", label: "outcome", help: "Requests"),
            calls: LabelledCounter(registry: registry, namespace: "test", name: "calls", label: "result", help: "Calls")
        )
        holder.requests.increment("accepted")
        let printed = String(describing: holder)
        #expect(printed.contains("holder"), "\(printed)")
        #expect(String(reflecting: holder.calls).contains("LabelledCounter"))
    }
}
