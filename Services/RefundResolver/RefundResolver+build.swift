import AppStoreAPI
import Hummingbird
import Logging
import NotificationPipeline
import PipelineRecords
import Prometheus
import RdKafka
import ServiceLifecycle
import ServiceRuntime

/// Builds refund-resolver: the HTTP client, the producer, the loop over fresh status requests, the loop over
/// the retry topic (delay queue), and the reconciler when configured, behind the operations endpoints.
/// Tests call this too.
func buildApplication(
    settings: RefundResolverSettings, registry: PrometheusCollectorRegistry, logger: Logger
) throws -> some ApplicationProtocol {
    let http = HTTPClientService()
    let verifiers = try settings.trust.makeVerifiers(for: settings.accepted)
    // No inline retries: the handler reschedules instead, so a partition is never held by a sleeping call.
    let client = try settings.api.makeClient(
        http: http.client, verifiers: verifiers, retry: RetryPolicy.none, logger: logger)
    let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(client: settings.kafka), logger: logger)
    let bucket = RateBudget(ratePerSecond: settings.ratePerSecond)
    let handler = StatusRequestHandler(
        client: client, bucket: bucket, producer: producer, topics: settings.topics, signing: settings.signing,
        retryTopic: settings.topics.statusRetry,
        concurrency: settings.concurrency, giveUpAfter: settings.giveUpAfter, retryBaseDelay: settings.retryBaseDelay,
        retryMaximumDelay: settings.retryMaximumDelay,
        outcomes: LabelledCounter(
            registry: registry, namespace: "refund_resolver", name: "requests", label: "outcome",
            help: "Status requests by outcome"),
        calls: LabelledCounter(
            registry: registry, namespace: "refund_resolver", name: "api_calls", label: "result",
            help: "App Store Server API calls (statuses, consumption answers) by result"),
        consumptionAnswers: LabelledCounter(
            registry: registry, namespace: "refund_resolver", name: "consumption_answers", label: "result",
            help: "Consumption answers by result (late: the 12-hour window closed first)"),
        logger: logger)
    // A batch never needs more than ~10 s of this replica's rate, far below the poll interval.
    let batch = max(1, min(200, Int(settings.ratePerSecond * 10)))
    let readiness = Readiness()
    var fresh = ConsumerLoop(
        consumer: try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                client: settings.kafka, groupID: settings.groupID, topics: [settings.topics.statusRequests],
                sessionTimeout: settings.sessionTimeout),
            logger: logger),
        handler: handler, readiness: readiness, logger: logger)
    fresh.maximumBatch = batch
    fresh.lagMetric = ConsumerLagMetric(registry: registry, group: settings.groupID)
    var retries = ConsumerLoop(
        consumer: try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                client: settings.kafka, groupID: settings.groupID + "-retry", topics: [settings.topics.statusRetry],
                sessionTimeout: settings.sessionTimeout),
            logger: logger),
        handler: handler, logger: logger)
    retries.maximumBatch = batch
    retries.lagMetric = ConsumerLagMetric(registry: registry, group: settings.groupID + "-retry")
    var services: [any Service] = [
        http, producer, fresh, retries,
        DependencyProbe(checks: [.broker(producer)], readiness: readiness, logger: logger),
    ]
    if let interval = settings.reconcileInterval {
        services.append(
            ReconcilerService(
                backfill: NotificationBackfill(
                    client: client, producer: producer, topics: settings.topics,
                    scopes: settings.api.scopes(settings.accepted)),
                interval: interval,
                window: settings.reconcileWindow,
                runs: LabelledCounter(
                    registry: registry, namespace: "refund_resolver", name: "reconciler_runs", label: "result",
                    help: "Reconciler runs by result"),
                logger: logger))
    }
    return OperationsServer.build(
        host: settings.http.host, port: settings.http.port, readiness: readiness, registry: registry,
        services: services, logger: logger)
}
