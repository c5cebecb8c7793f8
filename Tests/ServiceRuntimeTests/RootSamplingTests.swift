import JWSVerification
import OTel
import RdKafka
import ServiceContextModule
import ServiceRuntime
import TestSupport
import Testing
import Tracing

/// Roots sampled at the door: the same decision on a trace id as swift-otel's TraceIdRatioBased sampler, a dropped
/// root is a fresh, valid, unsampled `traceparent` that every write of its context carries unchanged, and the ratio
/// is read (and a bad one refused) as OpenTelemetry's variables say.
@Suite struct RootSamplingTests {
    // MARK: The decision

    @Test(arguments: [0.0, 0.01, 0.25, 0.5, 0.9, 1.0])
    func theDecisionOnATraceIdIsSwiftOTelsOwn(_ ratio: Double) throws {
        // swift-otel's tracer sampling by trace id alone, whatever the parent says.
        var configuration = OTel.Configuration.default
        configuration.traces.sampler = try #require(.traceIDRatio(ratio: ratio))
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        let tracer = try OTel.makeTracingBackend(configuration: configuration).factory
        let sampling = RootSampling(ratio: ratio)
        var generator = SeededGenerator(seed: UInt64(ratio * 1000) + 7)
        var kept = 0
        for _ in 0..<400 {
            let traceID = Self.bytes(generator.next()) + Self.bytes(generator.next())
            #expect(HexText.bytes(Hex.encode(traceID)) == traceID, "the tests read hex as it was written")
            var context = ServiceContext.topLevel
            tracer.extract(
                ["traceparent": "00-\(Hex.encode(traceID))-00f067aa0ba902b7-01"], into: &context,
                using: FieldsExtractor())
            let span = tracer.startSpan("decide", context: context)
            #expect(sampling.keeps(traceID: traceID) == span.isRecording, "trace \(Hex.encode(traceID))")
            if span.isRecording { kept += 1 }
            span.end()
        }
        if ratio == 0 { #expect(kept == 0) }
        if ratio == 1 { #expect(kept == 400) }
        if ratio == 0.5 { #expect(kept > 100 && kept < 300, "a seeded draw, the same every run: \(kept)") }
    }

    @Test func theBoundaryIsTheTraceIdsLastEightBytes() {
        let half = RootSampling(ratio: 0.5)
        let low = [UInt8](repeating: 0xff, count: 8) + [UInt8](repeating: 0, count: 7) + [1]
        let high = [UInt8](repeating: 0, count: 8) + [UInt8](repeating: 0xff, count: 8)
        #expect(half.keeps(traceID: low))
        #expect(!half.keeps(traceID: high))
    }

    // MARK: A dropped root

    @Test func aDroppedRootIsAFreshValidUnsampledTraceparent() throws {
        let dropping = RootSampling(ratio: 0)
        var seen = Set<[UInt8]>()
        for _ in 0..<1000 {
            let traceParent = try #require(dropping.droppedRoot())
            let header = KafkaHeader(name: "traceparent", value: traceParent)
            #expect(TraceHeaders.unsampledTrace(in: [header]) == [header], "valid, version 00, not sampled")
            let traceID = try #require(HexText.bytes(traceParent[3..<35]), "hex trace id")
            #expect(!dropping.keeps(traceID: traceID), "its own rule dropped it")
            seen.insert(Array(traceParent[3..<35]))
        }
        #expect(seen.count == 1000, "every root a trace of its own")
        #expect(RootSampling(ratio: 1).droppedRoot() == nil, "a kept root is left to the tracer")
    }

    @Test func whatAContextForwardingAnUnsampledTraceWrites() throws {
        let traceParent = try #require(RootSampling(ratio: 0).droppedRoot())
        let context = TraceHeaders.forwarding(unsampled: traceParent, in: .topLevel)
        var headers = [
            KafkaHeader(name: "x-request-id", text: "r1"),
            KafkaHeader(name: "traceparent", text: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
            KafkaHeader(name: "tracestate", text: "vendor=old"),
        ]
        TraceHeaders.inject(context, into: &headers)
        #expect(
            headers == [
                KafkaHeader(name: "x-request-id", text: "r1"), KafkaHeader(name: "traceparent", value: traceParent),
            ], "the forwarded trace replaces any other")
        #expect(TraceHeaders.traceParent(of: context) == String(decoding: traceParent, as: UTF8.self))
    }

    // MARK: Settings

    @Test func theRatioIsReadAsOpenTelemetrySays() throws {
        let ratio = { (values: [String: String]) throws(SettingsError) in
            try TracingSetup.ratio(EnvironmentSettings(values))
        }
        #expect(
            try ratio(["OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.01"])
                == RootSampling(ratio: 0.01))
        #expect(try ratio(["OTEL_TRACES_SAMPLER": "parentbased_traceidratio"]) == RootSampling(ratio: 1))
        #expect(try ratio([:]) == nil, "parentbased_always_on: every root is kept, by swift-otel")
        #expect(try ratio(["OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5"]) == nil)
        #expect(try ratio(["OTEL_TRACES_SAMPLER": "always_on", "OTEL_TRACES_SAMPLER_ARG": "junk"]) == nil)
        for sampler in ["traceidratio", "parentbased_traceidratio"] {
            for bad in ["1.5", "-0.1", "one percent"] {
                do {
                    _ = try ratio(["OTEL_TRACES_SAMPLER": sampler, "OTEL_TRACES_SAMPLER_ARG": bad])
                    Issue.record("accepted \(bad) for \(sampler)")
                } catch {
                    #expect(error.description == "OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 through 1, not \(bad)")
                }
            }
        }
    }

    // MARK: Helpers

    /// The eight bytes of `word` as memory holds them.
    static func bytes(_ word: UInt64) -> [UInt8] {
        withUnsafeBytes(of: word) { Array($0) }
    }
}

/// Reads trace fields from a dictionary.
private struct FieldsExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }
}
