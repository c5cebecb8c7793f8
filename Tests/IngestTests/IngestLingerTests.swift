import AppStoreModels
import AppStoreSigning
import Foundation
import Hummingbird
import HummingbirdTesting
import JWSVerification
import NIOEmbedded
import NotificationPipeline
import PipelineRecords
import Prometheus
import RdKafka
import ServiceRuntime
import TestSupport
import Testing

@testable import Ingest

/// Ingest's producer lingers so that a burst's records reach the broker in batches, but a request alone in flight
/// does not wait for company that is not coming. Against a real broker: with a linger far longer than the suite may
/// run, a lone request is answered, its record on the raw topic and counted as sent at once; a request that arrives
/// while another is still in flight waits for the linger like any batch, and is not counted.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct IngestLingerTests {
    let fixtures: SignedFixtures

    init() throws {
        self.fixtures = try SignedFixtures()
    }

    @Test func aRequestAloneIsSentWithoutWaitingForTheLinger() async throws {
        try await withLocalBroker { bootstrap in
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            // Five minutes of linger, through `KAFKA_PROPERTIES` as an operator would set it: a record that waited for
            // it would outlast the suite's time limit. librdkafka wants the delivery timeout above the linger.
            var settings = IngestTestSupport.settings(
                bootstrap: [bootstrap], roots: [self.fixtures.pki.root], produceTimeout: .seconds(600))
            settings.kafka.additional["linger.ms"] = "300000"
            try await kafka.createTopics([(settings.topics.raw, 1)])
            let registry = PrometheusCollectorRegistry()
            let app = try buildApplication(
                settings: settings, registry: registry, logger: IngestTestSupport.quietLogger)
            let body = IngestTestSupport.body(try self.fixtures.signedNotification())
            try await app.test(.router) { client in
                try await client.execute(uri: "/notifications", method: .post, body: body) { response in
                    #expect(response.status == .ok)
                }
            }
            #expect(Self.sentAtOnce(registry) == 1, "the lone request's record went without lingering")
            let records = try await kafka.readAll(settings.topics.raw, atLeast: 1)
            #expect(records.map(\.value) == [Array(buffer: body)])
        }
    }

    @Test func aRequestBesideAnotherWaitsForItsBatch() async throws {
        try await withLocalBroker { bootstrap in
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            let topics = PipelineTopics()
            try await kafka.createTopics([(topics.raw, 1)])
            var configuration = KafkaProducerConfiguration(client: KafkaClientSettings(bootstrapServers: [bootstrap]))
            configuration.linger = .seconds(1)
            let producer = try KafkaProducer(configuration: configuration, logger: IngestTestSupport.quietLogger)
            let registry = PrometheusCollectorRegistry()
            // The routes behind the shedding middleware, which counts the requests in flight, as `buildApplication`
            // puts them; the requests are handed to its responder directly, so that one can be held open.
            let inFlight = InFlightCounter()
            let router = Router(context: DoorContext.self)
            router.add(middleware: LoadSheddingMiddleware(limit: 8, inFlight: inFlight))
            NotificationController(
                admission: NotificationAdmission(
                    apps: [AppIdentity(bundleId: SignedFixtures.bundleId, appAppleId: SignedFixtures.appAppleId)],
                    environments: [.sandbox]),
                edge: nil, trustedProxies: .none, producer: producer, requests: inFlight, topics: topics,
                maximumBodyBytes: 64 * 1024, metrics: IngestMetrics(registry: registry),
                logger: IngestTestSupport.quietLogger
            ).addRoutes(to: router)
            let responder = router.buildResponder()
            let context = DoorContext(
                source: ApplicationRequestContextSource(
                    channel: EmbeddedChannel(), logger: IngestTestSupport.quietLogger))
            let body = Array(buffer: IngestTestSupport.body(try self.fixtures.signedNotification()))
            // The first request's body arrives in two parts; the second part is held back until the other request was
            // answered, so the first is in flight all the while.
            let (parts, arriving) = AsyncStream.makeStream(of: ByteBuffer.self)
            arriving.yield(ByteBuffer(bytes: body.prefix(100)))
            let first = Task {
                try await responder.respond(
                    to: Self.post(body.count, RequestBody(asyncSequence: parts)), context: context)
            }
            while inFlight.current == 0 { await Task.yield() }
            let second = try await responder.respond(
                to: Self.post(body.count, RequestBody(buffer: ByteBuffer(bytes: body))), context: context)
            #expect(second.status == .ok)
            #expect(Self.sentAtOnce(registry) == 0, "the second request's record waited for its batch")
            arriving.yield(ByteBuffer(bytes: body.dropFirst(100)))
            arriving.finish()
            #expect(try await first.value.status == .ok)
            #expect(Self.sentAtOnce(registry) == 1, "alone once the other was answered, the first went at once")
            await producer.shutdown()
            let records = try await kafka.readAll(topics.raw, atLeast: 2)
            #expect(records.map(\.value) == [body, body])
        }
    }

    // MARK: Helpers

    /// A POST of a `length`-byte body to `/notifications`.
    static func post(_ length: Int, _ body: RequestBody) -> Request {
        Request(
            head: HTTPRequest(
                method: .post, scheme: "http", authority: "127.0.0.1", path: "/notifications",
                headerFields: [.contentType: "application/json", .contentLength: String(length)]),
            body: body)
    }

    /// `ingest_records_sent_at_once_total` as the registry exposes it.
    static func sentAtOnce(_ registry: PrometheusCollectorRegistry) -> Int? {
        var text: [UInt8] = []
        registry.emit(into: &text)
        return String(decoding: text, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("ingest_records_sent_at_once_total ") }
            .flatMap { Int($0.split(separator: " ").last ?? "") }
    }
}
