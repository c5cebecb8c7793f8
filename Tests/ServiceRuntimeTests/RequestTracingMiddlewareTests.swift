import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InMemoryTracing
import OTel
import RdKafka
import ServiceContextModule
import ServiceRuntime
import Synchronization
import TestSupport
import Testing
import Tracing

/// The request span of the HTTP services on a real HTTP server: a sampled request is one span named by its route,
/// continuing the caller's trace, with its attributes, ended once the answer is written (errors recorded); a request
/// the sampler drops still runs inside its trace's context, so what it writes carries the decision on.
@Suite struct RequestTracingMiddlewareTests {
    // MARK: A sampled request

    @Test func aSampledRequestIsOneSpanNamedByItsRouteContinuingTheCallersTrace() async throws {
        let tracer = InMemoryTracer()
        let seen = Mutex<String?>(nil)
        let router = Router()
        router.add(middleware: RequestTracingMiddleware(tracer: tracer))
        router.post("/notifications") { _, _ -> String in
            seen.withLock { $0 = ServiceContext.current?.inMemorySpanContext?.spanID }
            return "stored"
        }
        try await Self.serve(router) { client in
            try await client.execute(
                uri: "/notifications", method: .post,
                headers: [
                    HTTPField.Name(InMemoryTracer.traceIDKey)!: "trace-of-the-caller",
                    HTTPField.Name(InMemoryTracer.spanIDKey)!: "span-of-the-caller",
                ]
            ) { #expect($0.status == .ok) }
        }
        let span = try #require(try await Self.finished(1, of: tracer).first)
        #expect(span.operationName == "POST /notifications")
        #expect(span.kind == .server)
        #expect(span.traceID == "trace-of-the-caller" && span.parentSpanID == "span-of-the-caller")
        #expect(seen.withLock { $0 } == span.spanID, "the handler runs inside the request's span")
        #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "POST")
        #expect(span.attributes["http.route"]?.toSpanAttribute() == "/notifications")
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(span.attributes["http.response.body.size"]?.toSpanAttribute() == 6)
    }

    @Test func aFailedRequestRecordsItsErrorAndStatus() async throws {
        let tracer = InMemoryTracer()
        let router = Router()
        router.add(middleware: RequestTracingMiddleware(tracer: tracer))
        router.get("/customers/{customer}") { _, _ -> String in throw HTTPError(.serviceUnavailable) }
        try await Self.serve(router) { client in
            try await client.execute(uri: "/customers/c-1", method: .get) { #expect($0.status == .serviceUnavailable) }
        }
        let span = try #require(try await Self.finished(1, of: tracer).first)
        #expect(span.operationName == "GET /customers/{customer}", "named by the route, never the customer's id")
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 503)
        #expect(span.status?.code == .error)
        #expect(span.errors.count == 1)
        #expect(span.traceID != "" && span.parentSpanID == nil, "a request without a trace starts one")
    }

    // MARK: A dropped request

    @Test func aDroppedRequestCarriesItsTracesDecisionOn() async throws {
        // swift-otel's own tracer, sampling as its parent did: the caller's trace was dropped (flags 00).
        var configuration = OTel.Configuration.default
        configuration.traces.sampler = .parentBasedAlwaysOn
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        let tracer = try OTel.makeTracingBackend(configuration: configuration).factory
        let carried = Mutex<[String]>([])
        let router = Router()
        router.add(middleware: RequestTracingMiddleware(tracer: tracer))
        router.post("/notifications") { _, _ -> String in
            // What the handler writes on (ingest's Kafka headers) carries the request's context.
            var fields: [String: String] = [:]
            tracer.inject(ServiceContext.current ?? .topLevel, into: &fields, using: FieldsInjector())
            carried.withLock { $0.append(fields["traceparent"] ?? "none") }
            return "stored"
        }
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
        try await Self.serve(router) { client in
            for flags in ["00", "01"] {
                try await client.execute(
                    uri: "/notifications", method: .post,
                    headers: [HTTPField.Name("traceparent")!: "00-\(trace)-00f067aa0ba902b7-\(flags)"]
                ) { #expect($0.status == .ok) }
            }
        }
        let traceparents = carried.withLock { $0 }
        #expect(traceparents.count == 2)
        for (traceparent, flags) in zip(traceparents, ["00", "01"]) {
            let parts = traceparent.split(separator: "-").map(String.init)
            #expect(parts.count == 4 && parts[1] == trace, "the caller's trace continues: \(traceparent)")
            #expect(parts.count == 4 && parts[2] != "00f067aa0ba902b7", "under the request's own span")
            #expect(parts.last == flags, "the caller's sampling decision is carried on: \(traceparent)")
        }
    }

    // MARK: Roots sampled at the door

    @Test func aRootTheDoorDropsHasNoSpanAndCarriesAFreshUnsampledTrace() async throws {
        let tracer = InMemoryTracer()
        let carried = Mutex<[String]>([])
        let router = Router()
        router.add(middleware: RequestTracingMiddleware(tracer: tracer, rootSampling: RootSampling(ratio: 0)))
        router.post("/notifications") { _, _ -> String in
            carried.withLock { $0.append(TraceHeaders.traceParent(of: ServiceContext.current ?? .topLevel) ?? "none") }
            return "stored"
        }
        try await Self.serve(router) { client in
            for _ in 0..<3 {
                try await client.execute(uri: "/notifications", method: .post) { #expect($0.status == .ok) }
            }
        }
        // A span would have been started before the handler ran: none is active or finished once all answered.
        #expect(tracer.activeSpans.isEmpty && tracer.finishedSpans.isEmpty, "no span for a dropped root")
        let traceparents = carried.withLock { $0 }
        #expect(traceparents.count == 3 && Set(traceparents).count == 3, "a trace of its own each: \(traceparents)")
        for traceparent in traceparents {
            let header = KafkaHeader(name: "traceparent", text: traceparent)
            #expect(TraceHeaders.unsampledTrace(in: [header]) == [header], "valid and unsampled: \(traceparent)")
        }
    }

    @Test func aRootTheDoorKeepsIsTheTracersRootAndACallersTraceIsTheCallers() async throws {
        let tracer = InMemoryTracer()
        let keeping = Router()
        keeping.add(middleware: RequestTracingMiddleware(tracer: tracer, rootSampling: RootSampling(ratio: 1)))
        keeping.post("/notifications") { _, _ -> String in "stored" }
        try await Self.serve(keeping) { client in
            try await client.execute(uri: "/notifications", method: .post) { #expect($0.status == .ok) }
        }
        let root = try #require(try await Self.finished(1, of: tracer).first)
        #expect(root.operationName == "POST /notifications" && root.parentSpanID == nil, "the trace's root span")

        // The door drops every root, but a request bringing a trace follows it: it is no root.
        tracer.clearAll()
        let dropping = Router()
        dropping.add(middleware: RequestTracingMiddleware(tracer: tracer, rootSampling: RootSampling(ratio: 0)))
        dropping.post("/notifications") { _, _ -> String in "stored" }
        try await Self.serve(dropping) { client in
            try await client.execute(
                uri: "/notifications", method: .post,
                headers: [
                    HTTPField.Name(InMemoryTracer.traceIDKey)!: "trace-of-the-caller",
                    HTTPField.Name(InMemoryTracer.spanIDKey)!: "span-of-the-caller",
                ]
            ) { #expect($0.status == .ok) }
        }
        let continued = try #require(try await Self.finished(1, of: tracer).first)
        #expect(continued.traceID == "trace-of-the-caller" && continued.parentSpanID == "span-of-the-caller")
    }

    @Test func withSwiftOTelOnlyARequestWithoutAReadableTraceIsARoot() async throws {
        var configuration = OTel.Configuration.default
        configuration.traces.sampler = .parentBasedAlwaysOn
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        let tracer = try OTel.makeTracingBackend(configuration: configuration).factory
        let carried = Mutex<[String]>([])
        let router = Router()
        router.add(middleware: RequestTracingMiddleware(tracer: tracer, rootSampling: RootSampling(ratio: 0)))
        router.post("/notifications") { _, _ -> String in
            let context = ServiceContext.current ?? .topLevel
            var fields: [String: String] = [:]
            tracer.inject(context, into: &fields, using: FieldsInjector())
            carried.withLock { $0.append(TraceHeaders.traceParent(of: context) ?? fields["traceparent"] ?? "none") }
            return "stored"
        }
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
        let sent = ["00-\(trace)-00f067aa0ba902b7-01", "00-\(trace)-00f067aa0ba902b7-00", "00-\(trace)-junk-01", nil]
        try await Self.serve(router) { client in
            for traceparent in sent {
                try await client.execute(
                    uri: "/notifications", method: .post,
                    headers: traceparent.map { [HTTPField.Name("traceparent")!: $0] } ?? [:]
                ) { #expect($0.status == .ok) }
            }
        }
        let parts = carried.withLock { $0 }.map { $0.split(separator: "-").map(String.init) }
        try #require(parts.count == 4 && parts.allSatisfy { $0.count == 4 })
        #expect(parts[0][1] == trace && parts[0][3] == "01", "a sampled caller's trace is continued, sampled")
        #expect(parts[1][1] == trace && parts[1][3] == "00", "an unsampled caller's trace is continued, unsampled")
        for root in parts[2...] {
            #expect(root[1] != trace && root[3] == "00", "a malformed traceparent or none: a root the door dropped")
        }
    }

    // MARK: Helpers

    /// Runs `test` against `router` on a real HTTP server.
    private static func serve(
        _ router: Router<BasicRequestContext>, _ test: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live, test)
    }

    /// The tracer's finished spans once there are `count` (a span ends after its answer's last byte is written,
    /// which the client may see first).
    private static func finished(_ count: Int, of tracer: InMemoryTracer) async throws -> [FinishedInMemorySpan] {
        try await Polling.until(looks: 200, every: .milliseconds(10)) { tracer.finishedSpans.count >= count }
        return tracer.finishedSpans
    }
}

/// Writes trace fields into a dictionary.
private struct FieldsInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}
