import RdKafka
import ServiceRuntime
import Testing

/// Which records a stage may pass on without a span: a valid W3C `traceparent` of version 00 whose sampled flag is
/// clear, under a parent-based sampler. Anything else (sampled, malformed, another version) goes through the tracer.
@Suite struct TraceHeadersTests {
    static let unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"

    // MARK: The trace headers forwarded

    @Test func anUnsampledTraceIsForwardedWithItsState() {
        let headers = [
            KafkaHeader(name: "x-request-id", text: "r1"), KafkaHeader(name: "traceparent", text: Self.unsampled),
            KafkaHeader(name: "tracestate", text: "vendor=kept"),
        ]
        #expect(
            TraceHeaders.unsampledTrace(in: headers) == [
                KafkaHeader(name: "traceparent", text: Self.unsampled),
                KafkaHeader(name: "tracestate", text: "vendor=kept"),
            ])
        #expect(
            TraceHeaders.unsampledTrace(in: [KafkaHeader(name: "traceparent", text: Self.unsampled)]) == [
                KafkaHeader(name: "traceparent", text: Self.unsampled)
            ])
        // The last of a name wins, as when the context is extracted.
        let sampledLast = [
            KafkaHeader(name: "traceparent", text: Self.unsampled),
            KafkaHeader(name: "traceparent", text: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
        ]
        #expect(TraceHeaders.unsampledTrace(in: sampledLast) == nil)
    }

    @Test(arguments: [
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // sampled
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03",  // sampled, another flag set
        "00-00000000000000000000000000000000-00f067aa0ba902b7-00",  // trace id all zeros
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-00",  // parent id all zeros
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-00",  // upper case
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",  // another version
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",  // not hex
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",  // not dashed
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-",  // too long
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-00",  // too short
        "",
    ])
    func anythingButAValidUnsampledTraceGoesThroughTheTracer(_ traceParent: String) {
        #expect(TraceHeaders.unsampledTrace(in: [KafkaHeader(name: "traceparent", text: traceParent)]) == nil)
    }

    @Test func noTraceparentNothingToForward() {
        #expect(TraceHeaders.unsampledTrace(in: []) == nil)
        #expect(TraceHeaders.unsampledTrace(in: [KafkaHeader(name: "tracestate", text: "vendor=kept")]) == nil)
        #expect(TraceHeaders.unsampledTrace(in: [KafkaHeader(name: "traceparent", value: nil)]) == nil)
    }

    // MARK: The sampler

    @Test func onlyAParentBasedSamplerFollowsTheParent() {
        #expect(TracingSetup.followsParentSampling(environment: [:]), "OpenTelemetry's default: parentbased_always_on")
        #expect(TracingSetup.followsParentSampling(environment: ["OTEL_TRACES_SAMPLER": "parentbased_traceidratio"]))
        #expect(TracingSetup.followsParentSampling(environment: ["OTEL_TRACES_SAMPLER": "parentbased_always_off"]))
        #expect(!TracingSetup.followsParentSampling(environment: ["OTEL_TRACES_SAMPLER": "traceidratio"]))
        #expect(!TracingSetup.followsParentSampling(environment: ["OTEL_TRACES_SAMPLER": "always_on"]))
    }
}
