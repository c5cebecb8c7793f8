import Hummingbird
import Logging
import NotificationPipeline
import PipelineRecords
import Prometheus
import RdKafka
import ServiceRuntime

/// Builds the ingest application: the notification routes, `/health`, `/ready`, `/metrics`, and the Kafka
/// producer as a service (it flushes after the server has drained its requests on shutdown).
///
/// Tests call this with their own settings and registry.
func buildApplication(
    settings: IngestSettings, registry: PrometheusCollectorRegistry, logger: Logger
) throws -> some ApplicationProtocol {
    var producerConfiguration = KafkaProducerConfiguration(client: settings.kafka)
    // The broker's acknowledgement must come within the produce timeout: librdkafka then reports the
    // message as failed itself (message.timeout.ms), and the request answers 503.
    producerConfiguration.deliveryTimeout = settings.produceTimeout
    // A burst's records wait up to 10 ms for each other, so the broker takes them in fewer, larger batches (at 128
    // requests in flight, ~10 % more requests a second and a fifth less of the broker's CPU than 2 ms); a request
    // alone in flight does not wait (``NotificationController``). `KAFKA_PROPERTIES` `linger.ms` overrides it.
    producerConfiguration.linger = .milliseconds(10)
    let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
    let readiness = Readiness()
    readiness.set(true)
    let metrics = IngestMetrics(registry: registry)
    let router = Router(context: DoorContext.self)
    // A span per request (W3C trace context from the request's headers when present; Apple sends none).
    if TracingSetup.isOn { router.add(middleware: RequestTracingMiddleware()) }
    // One count of the requests in flight: the shedding middleware keeps it, the controller reads it to send a lone
    // request's record at once.
    let inFlight = InFlightCounter()
    router.add(
        middleware: LoadSheddingMiddleware(limit: settings.http.maximumConcurrentRequests, inFlight: inFlight) {
            metrics.count(outcome: "overloaded")
        })
    OperationsRoutes.add(
        to: router, readiness: readiness, registry: registry, metrics: settings.http.operationsPort == nil)
    let edge =
        settings.verifyAtEdge
        ? EdgeVerification(
            verifiers: try settings.trust.makeVerifiers(for: settings.accepted),
            newChainsPerSecond: settings.newChainsPerSecond)
        : nil
    let warmup = edge.map {
        ChainWarmup(
            verifiers: Array($0.verifiers.values), intermediates: settings.trust.warmIntermediates, logger: logger)
    }
    NotificationController(
        admission: NotificationAdmission(apps: settings.accepted.apps, environments: settings.accepted.environments),
        edge: edge, trustedProxies: settings.http.trustedProxies,
        producer: producer, requests: inFlight, topics: settings.topics, maximumBodyBytes: settings.maximumBodyBytes,
        metrics: metrics, logger: logger
    ).addRoutes(to: router)
    return Application(
        router: router,
        server: settings.http.server,
        configuration: ApplicationConfiguration(
            address: .hostname(settings.http.host, port: settings.http.port), serverName: "ingest"),
        services: [producer, DependencyProbe(checks: [.broker(producer)], readiness: readiness, logger: logger)]
            + (warmup.map { [$0] } ?? [])
            + OperationsRoutes.listener(settings.http, readiness: readiness, registry: registry, logger: logger),
        logger: logger)
}
