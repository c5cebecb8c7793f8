import Foundation
import PipelineRecords
import RdKafka
import ServiceRuntime
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The ingest binary sampling the roots of its traces at its door under `parentbased_traceidratio`, exporting to a
/// real OTLP receiver against a real broker: a dropped root is a raw record with a fresh unsampled `traceparent` and
/// no span anywhere; a kept root is one root span, sampled once (not the ratio twice); a caller's trace is followed;
/// a ratio outside 0 through 1 stops the service at start.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct IngestTraceTests {
    static let callersTrace = "0af7651916cd43dd8448eb211c80319c"

    @Test func rootsAreSampledOnceAtTheDoorAndEveryRecordCarriesItsTrace() async throws {
        try await withLocalBroker { bootstrap in
            let topics = PipelineTopics()
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            try await kafka.createTopics([(topics.raw, 1)])
            let fixtures = try SignedFixtures()
            let directory = try LocalComponents.temporaryDirectory("ingest-trace")
            let collector = try TraceCollector(directory: directory)
            defer { collector.stop() }
            let (environment, base) = try IngestTestSupport.binaryEnvironment(
                bootstrap: bootstrap, fixtures: fixtures, directory: directory,
                extra: collector.environment.merging([
                    "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.5",
                ]) { _, new in new })
            let ingest = try ServiceProcess.start(
                "ingest", environment: environment, log: directory.appendingPathComponent("ingest.log"))
            let roots = 96
            let stored = try await ServiceProcess.whileRunning(ingest) {
                try #require(
                    try await Polling.until(looks: 75, every: .milliseconds(200)) {
                        await Self.post(base + "/ready", body: nil) == 200
                    }, "ready")
                for index in 0...roots {
                    var payload = SignedFixtures.notification()
                    payload.notificationUUID = "00000000-0000-4000-8000-\(String(format: "%012d", index))"
                    // The last brings a sampled trace of its caller's.
                    let traceparent = index == roots ? "00-\(Self.callersTrace)-b7ad6b7169203331-01" : nil
                    let body = Data(IngestTestSupport.body(try fixtures.signer.sign(payload)).readableBytesView)
                    #expect(await Self.post(base + "/notifications", body: body, traceparent: traceparent) == 200)
                }
                return try await kafka.readAll(topics.raw, atLeast: roots + 1, quiet: .seconds(1))
            }
            // Spans are flushed at the latest when the process stops (above): read until the sampled ones are there.
            let sampled = stored.compactMap { Self.traceparent(of: $0) }.filter { $0.flags == "01" }
            var spans = try collector.spans()
            for _ in 0..<100 where spans.count < sampled.count {
                try await Task.sleep(for: .milliseconds(100))
                spans = try collector.spans()
            }
            try Self.check(stored: stored, spans: spans, roots: roots)
        }
    }

    @Test func aRatioOutsideZeroThroughOneStopsIngestAtStart() async throws {
        let directory = try LocalComponents.temporaryDirectory("ingest-trace-ratio")
        let (environment, _) = try IngestTestSupport.binaryEnvironment(
            bootstrap: "127.0.0.1:9", fixtures: try SignedFixtures(), directory: directory,
            extra: [
                "OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
                "OTEL_TRACES_SAMPLER_ARG": "5",
            ])
        let log = directory.appendingPathComponent("ingest.log")
        let ingest = try ServiceProcess.start("ingest", environment: environment, log: log)
        #expect(try await ServiceProcess.exitStatus(of: ingest) == 1)
        let said = try String(contentsOf: log, encoding: .utf8)
        #expect(said.contains("OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 through 1, not 5"), "\(said)")
    }

    // MARK: Checking

    /// Every record carries a trace of its own; an unsampled root was dropped by the door's rule and has no span; a
    /// sampled root has exactly its root span, and some of those trace ids are ones the ratio's rule would have
    /// dropped (swift-otel's own ids, sampled because the door kept the root: were the ratio applied a second time,
    /// every sampled trace id would pass it; with 96 roots at 0.5 that all do by chance is about one in a million).
    /// Any other span is the root of a readiness probe's request (the test polls `/ready`, which is traced too).
    static func check(stored: [ConsumerRecord], spans: [TraceCollector.Span], roots: Int) throws {
        let traces = stored.compactMap { Self.traceparent(of: $0) }
        try #require(traces.count == roots + 1, "every record carries a valid traceparent")
        let spansByTrace = Dictionary(grouping: spans, by: \.traceId)
        let fromCaller = traces.filter { $0.trace == Self.callersTrace }
        #expect(fromCaller.count == 1 && fromCaller.first?.flags == "01", "the caller's trace is followed")
        #expect(spansByTrace[Self.callersTrace]?.first?.parentSpanId == "b7ad6b7169203331")
        let rootTraces = traces.filter { $0.trace != Self.callersTrace }
        #expect(Set(rootTraces.map(\.trace)).count == roots, "a trace of its own for every root")
        let ratio = RootSampling(ratio: 0.5)
        let dropped = rootTraces.filter { $0.flags == "00" }
        let kept = rootTraces.filter { $0.flags == "01" }
        #expect(!dropped.isEmpty && !kept.isEmpty, "\(dropped.count) dropped, \(kept.count) kept")
        for root in dropped {
            let traceID = try #require(HexText.bytes(root.trace), "hex trace id")
            #expect(!ratio.keeps(traceID: traceID), "the door's rule dropped \(root.trace)")
            #expect(spansByTrace[root.trace] == nil, "no span of a dropped root")
        }
        for root in kept {
            let spans = spansByTrace[root.trace] ?? []
            #expect(
                spans.count == 1 && spans.first?.parentSpanId == "" && spans.first?.spanId == root.parent
                    && spans.first?.service == "ingest", "one root span for \(root.trace): \(spans)")
        }
        let recordTraces = Set(traces.map(\.trace))
        let otherSpans = spans.filter { !recordTraces.contains($0.traceId) }
        #expect(
            otherSpans.allSatisfy { $0.name == "GET /ready" && $0.parentSpanId == "" },
            "besides its notifications' spans, ingest exports only its readiness probes' roots: \(otherSpans)")
        #expect(spans.count - otherSpans.count == kept.count + 1, "one span a sampled request, nothing else")
        #expect(
            kept.contains { root in HexText.bytes(root.trace).map { !ratio.keeps(traceID: $0) } ?? false },
            "a kept root is sampled once, not by the ratio a second time")
    }

    // MARK: Helpers

    /// The trace id, parent id and flags of a record's `traceparent`, nil when it has no valid one.
    static func traceparent(of record: ConsumerRecord) -> (trace: String, parent: String, flags: String)? {
        guard let text = record.header("traceparent")?.text else { return nil }
        let parts = text.split(separator: "-").map(String.init)
        guard parts.count == 4, parts[0] == "00", parts[1].count == 32, parts[2].count == 16 else { return nil }
        return (parts[1], parts[2], parts[3])
    }

    /// The HTTP status of a POST of `body` (a GET without one), with `traceparent` when given; 0 when no answer came.
    static func post(_ url: String, body: Data?, traceparent: String? = nil) async -> Int {
        var request = URLRequest(url: URL(string: url)!, timeoutInterval: 10)
        if let body {
            request.httpMethod = "POST"
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let traceparent { request.setValue(traceparent, forHTTPHeaderField: "traceparent") }
        return ((try? await URLSession.shared.data(for: request))?.1 as? HTTPURLResponse)?.statusCode ?? 0
    }
}
