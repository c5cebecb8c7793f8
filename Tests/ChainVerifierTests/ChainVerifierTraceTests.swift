import Foundation
import PipelineRecords
import RdKafka
import TestSupport
import Testing

/// The chain verifier's trace, a process of its binary exporting to a real OTLP receiver against a real broker: a
/// notification whose trace ingest sampled gets a span of its own that its output continues; one whose trace was not
/// sampled is passed on with the same `traceparent` and no span under a parent-based sampler (the default), and gets a
/// fresh, unsampled span of its own under a sampler that ignores the parent.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct ChainVerifierTraceTests {
    static let unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
    static let sampled = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    @Test func anUnsampledTraceIsForwardedUnchangedUnderAParentBasedSampler() async throws {
        let (verified, rejected, spans) = try await Self.run(sampler: nil)
        #expect(verified["sub-unsampled"]?.header("traceparent")?.text == Self.unsampled)
        #expect(verified["sub-unsampled"]?.header("tracestate")?.text == "vendor=kept")
        #expect(rejected["junk"]?.header("traceparent")?.text == Self.unsampled, "a DLQ record forwards it too")
        #expect(!spans.contains { $0.traceId == "4bf92f3577b34da6a3ce929d0e0e4736" }, "no span of an unsampled trace")
        try Self.expectSampledTraceContinued(verified, spans)
    }

    @Test func anUnsampledTraceGetsASpanOfItsOwnUnderASamplerIgnoringTheParent() async throws {
        // `always_on` samples every span whatever its parent says: the verifier's span is recorded and continued.
        let (verified, _, spans) = try await Self.run(sampler: "always_on")
        let parent = try #require(verified["sub-unsampled"]?.header("traceparent")?.text)
        #expect(parent.hasPrefix("00-4bf92f3577b34da6a3ce929d0e0e4736-"))
        #expect(parent != Self.unsampled, "the verifier's own span, not the one it received")
        #expect(
            spans.contains { $0.traceId == "4bf92f3577b34da6a3ce929d0e0e4736" && $0.parentSpanId == "00f067aa0ba902b7" }
        )
        try Self.expectSampledTraceContinued(verified, spans)
    }

    // MARK: Running it

    /// A sampled trace: the verifier's span is exported, child of the received parent, and the output carries it.
    static func expectSampledTraceContinued(_ verified: [String: ConsumerRecord], _ spans: [TraceCollector.Span]) throws
    {
        let span = try #require(
            spans.first { $0.traceId == "0af7651916cd43dd8448eb211c80319c" && $0.service == "chain-verifier" })
        #expect(span.parentSpanId == "b7ad6b7169203331")
        #expect(verified["sub-sampled"]?.header("traceparent")?.text == "00-\(span.traceId)-\(span.spanId)-01")
    }

    /// Produces three notifications (one each with an unsampled trace, a sampled trace, and none) and a body that is
    /// no notification with the unsampled trace, runs the chain-verifier with tracing on (`OTEL_TRACES_SAMPLER`
    /// `sampler`, unset for the default) until it has verified and rejected them, and returns its outputs by key and
    /// the spans it exported.
    static func run(sampler: String?) async throws -> (
        verified: [String: ConsumerRecord], rejected: [String: ConsumerRecord], spans: [TraceCollector.Span]
    ) {
        try await withLocalBroker { bootstrap in
            let fixtures = try SignedFixtures()
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            let topics = PipelineTopics()
            try await kafka.createTopics([(topics.raw, 1), (topics.verified, 1), (topics.rejected, 1)])
            let trace: [String: [KafkaHeader]] = [
                "sub-unsampled": [
                    KafkaHeader(name: "traceparent", text: Self.unsampled),
                    KafkaHeader(name: "tracestate", text: "vendor=kept"),
                ],
                "sub-sampled": [KafkaHeader(name: "traceparent", text: Self.sampled)],
                "sub-none": [],
            ]
            var raw: [ProducerRecord] = []
            for (subscription, headers) in trace.sorted(by: { $0.key < $1.key }) {
                var record = RawMessages.record(
                    try RawMessages.notification(
                        uuid: subscription, original: subscription, sequence: 1, signer: fixtures.signer),
                    subject: subscription, topic: topics.raw)
                record.headers += headers
                raw.append(record)
            }
            raw.append(
                ProducerRecord(
                    topic: topics.raw, key: Array("junk".utf8), value: Array("hello".utf8),
                    headers: [KafkaHeader(name: "traceparent", text: Self.unsampled)]))
            try await kafka.produce(raw)

            let directory = try LocalComponents.temporaryDirectory("chain-verifier-trace")
            try fixtures.pki.write(to: directory.appendingPathComponent("pki"))
            let collector = try TraceCollector(directory: directory)
            defer { collector.stop() }
            var environment = [
                "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "KAFKA_SESSION_TIMEOUT_MS": "6000", "LOG_LEVEL": "warning",
                "APPSTORE_APPS": "\(SignedFixtures.bundleId):\(SignedFixtures.appAppleId)",
                "APPSTORE_ENVIRONMENTS": "Sandbox",
                "APPSTORE_ROOT_CERTIFICATES": directory.appendingPathComponent("pki/root.der").path,
            ].merging(collector.environment) { _, new in new }
            environment["OTEL_TRACES_SAMPLER"] = sampler
            let fleet = try ServiceFleet(environment: environment, directory: directory, only: ["chain-verifier"])
            let (verified, rejected) = try await fleet.whileRunning {
                (
                    try await kafka.readAll(topics.verified, atLeast: 3, quiet: .seconds(1)),
                    try await kafka.readAll(topics.rejected, atLeast: 1, quiet: .seconds(1))
                )
            }
            // The sampled trace's span, exported once the process flushed its spans at shutdown.
            var spans = try collector.spans()
            for _ in 0..<100 where !spans.contains(where: { $0.service == "chain-verifier" }) {
                try await Task.sleep(for: .milliseconds(100))
                spans = try collector.spans()
            }
            #expect(verified.count == 3 && rejected.count == 1)
            let byKey = { (records: [ConsumerRecord]) in
                Dictionary(records.map { (String(decoding: $0.key ?? [], as: UTF8.self), $0) }) { first, _ in first }
            }
            return (byKey(verified), byKey(rejected), spans)
        }
    }
}
