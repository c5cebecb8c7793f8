import Hummingbird
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import Prometheus
import RdKafka
import ServiceLifecycle
import ServiceRuntime
import Storage

/// Builds webhook-dispatcher: the database client, the consumer that queues the `entitlements.*` events as
/// deliveries, the endpoint workers that deliver them, and the housekeeping, behind the operations endpoints. Tests
/// call this too.
func buildApplication(
    settings: WebhookDispatcherSettings, registry: PrometheusCollectorRegistry, logger: Logger
) throws -> some ApplicationProtocol {
    let database = PostgresClient(configuration: settings.database.clientConfiguration, backgroundLogger: logger)
    let backlog = WebhookBacklog(client: database, logger: logger)
    let metrics = DispatcherMetrics(registry: registry)
    let wakeups = Wakeups()
    let http = WebhookSender.makeClient()
    let sender = WebhookSender(client: http, addresses: settings.addresses, timeout: settings.requestTimeout)
    let readiness = Readiness()
    let topics = [
        settings.topics.entitlementChanges, settings.topics.entitlementFamily, settings.topics.entitlementRevocations,
    ]
    let kafkaConsumer = try KafkaConsumer(
        configuration: KafkaConsumerConfiguration(
            client: settings.kafka, groupID: settings.groupID, topics: topics, sessionTimeout: settings.sessionTimeout),
        logger: logger)
    let intake = IntakeProgress()
    var consumer = ConsumerLoop(
        consumer: kafkaConsumer,
        handler: EventQueueHandler(backlog: backlog, wakeups: wakeups, queued: metrics.queued, logger: logger),
        readiness: readiness, logger: logger)
    consumer.lagMetric = ConsumerLagMetric(registry: registry, group: settings.groupID)
    return OperationsServer.build(
        host: settings.http.host, port: settings.http.port, readiness: readiness, registry: registry,
        services: [
            database, HTTPClientService(client: http), consumer,
            IntakeWatch(
                consumer: kafkaConsumer, topics: topics, interval: settings.pollInterval, progress: intake,
                logger: logger),
            EndpointWorkers(
                backlog: backlog, sender: sender, settings: settings, wakeups: wakeups, metrics: metrics,
                intake: intake, logger: logger),
            BacklogHousekeeping(backlog: backlog, settings: settings, metrics: metrics, logger: logger),
            DependencyProbe(
                checks: [
                    .init("postgresql", within: .seconds(2)) { try await DatabaseClient.ping(database, logger: logger) }
                ], readiness: readiness, logger: logger),
        ],
        logger: logger)
}
