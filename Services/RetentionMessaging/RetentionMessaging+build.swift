import Hummingbird
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import Prometheus
import RdKafka
import ServiceRuntime
import Storage

/// Builds retention-messaging: Apple's real-time route, `/health`, `/ready`, `/metrics` (unless the operations port
/// serves them), the PostgreSQL client and the producer of `retention.offered`. Tests call this too.
func buildApplication(
    settings: RetentionSettings, registry: PrometheusCollectorRegistry, logger: Logger
) throws -> some ApplicationProtocol {
    var databaseConfiguration = settings.database.clientConfiguration
    // Its only writes are the replicas' shared answers (`realtime_answers`): their commits need not wait for the WAL
    // to reach the disk. A PostgreSQL crash can lose the last fraction of a second of them; a repeat of one of those
    // requests is then answered a second time.
    databaseConfiguration.options.additionalStartupParameters.append(("synchronous_commit", "off"))
    // Idle connections are not probed with `SELECT 1`: PostgresNIO's pool otherwise arms a keep-alive timer (a task
    // group of two tasks and a sleep) every time a request gives its connection back. A connection that died while
    // idle is found by the next request, which gets the app's default message (as when the database cannot answer)
    // while the pool replaces it. (Keeping every connection open as well, so no idle timer is armed either, saved
    // ~9 % of the CPU a request together with this, but held DATABASE_POOL_SIZE connections per replica.)
    databaseConfiguration.options.keepAliveBehavior = nil
    let database = PostgresClient(configuration: databaseConfiguration, backgroundLogger: logger)
    // Its events are never awaited (the answer goes out first), so librdkafka may gather them for longer than the
    // pipeline's 2 ms: at 1,000 requests/s one produce request every 20 ms instead of every 2 ms, which cut the
    // broker's CPU per event to about a third. `KAFKA_PROPERTIES` (`linger.ms=…`) overrides it.
    var producerConfiguration = KafkaProducerConfiguration(client: settings.kafka)
    producerConfiguration.linger = .milliseconds(20)
    let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
    let readiness = Readiness()
    readiness.set(true)
    let outcomes = LabelledCounter(
        registry: registry, namespace: "retention_messaging", name: "requests", label: "outcome",
        help: "real-time requests by answer (message, alternateProduct, promotionalOffer, default, none) or refusal")
    let events = LabelledCounter(
        registry: registry, namespace: "retention_messaging", name: "events", label: "outcome",
        help: "retention.offered events by delivery outcome")
    let router = Router(context: DoorContext.self)
    if TracingSetup.isOn { router.add(middleware: RequestTracingMiddleware()) }
    router.add(middleware: RequestDurationMiddleware(registry: registry, namespace: "retention_messaging"))
    router.add(
        middleware: LoadSheddingMiddleware(limit: settings.http.maximumConcurrentRequests) {
            outcomes.increment("overloaded")
        })
    OperationsRoutes.add(
        to: router, readiness: readiness, registry: registry, metrics: settings.http.operationsPort == nil)
    let verifiers = try settings.trust.makeVerifiers(for: settings.accepted)
    let replays = RealtimeReplayWindow()
    let sharedAnswers = RealtimeAnswers(client: database, logger: logger)
    let answerRecorder = RealtimeAnswerRecorder(answers: sharedAnswers, logger: logger)
    RetentionRoute(
        verifiers: verifiers,
        newChains: NewChainBudget(perSecond: settings.newChainsPerSecond), trustedProxies: settings.http.trustedProxies,
        facts: RetentionFacts(client: database, logger: logger), rules: settings.rules,
        offerKey: settings.offers?.key, producer: producer, topic: settings.topics.retentionOffered,
        maximumBodyBytes: settings.maximumBodyBytes,
        replays: replays, answerRecorder: answerRecorder, outcomes: outcomes,
        events: events, logger: logger
    ).add(to: router)
    let checks: [DependencyProbe.Check] = [
        .init("postgresql", within: .seconds(2)) { try await DatabaseClient.ping(database, logger: logger) },
        .broker(producer),
    ]
    return Application(
        router: router,
        server: settings.http.server,
        configuration: ApplicationConfiguration(
            address: .hostname(settings.http.host, port: settings.http.port), serverName: "retention-messaging"),
        services: [
            database, producer, DependencyProbe(checks: checks, readiness: readiness, logger: logger),
            ChainWarmup(
                verifiers: Array(verifiers.values), intermediates: settings.trust.warmIntermediates, logger: logger),
            answerRecorder,
            RealtimeAnswersPruning(answers: sharedAnswers, keep: replays.window + replays.skew, logger: logger),
        ]
            + OperationsRoutes.listener(settings.http, readiness: readiness, registry: registry, logger: logger),
        logger: logger)
}
