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

/// Builds the entitlement updater: the PostgreSQL client, the DLQ producer and the consumer loop over the
/// verified topic (after migrating, when configured) and the renewal-time sweeper, behind the operations
/// endpoints. The database client is registered first so it shuts down last. Tests call this too.
func buildApplication(
    settings: EntitlementUpdaterSettings, registry: PrometheusCollectorRegistry, logger: Logger
) throws -> some ApplicationProtocol {
    let database = PostgresClient(configuration: settings.database.clientConfiguration, backgroundLogger: logger)
    let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(client: settings.kafka), logger: logger)
    let consumer = try KafkaConsumer(
        configuration: KafkaConsumerConfiguration(
            client: settings.kafka, groupID: settings.groupID, topics: [settings.topics.verified],
            sessionTimeout: settings.sessionTimeout),
        logger: logger)
    let readiness = Readiness()
    let consumptionStatuses = LabelledCounter(
        registry: registry, namespace: "entitlement_updater", name: "consumption_requests", label: "status",
        help: "Consumption requests by the status they were recorded with (missed: no answer by the deadline)")
    let repository = EntitlementRepository(
        client: database, logger: logger, topics: settings.topics, catalog: settings.catalog,
        consumptionPolicy: settings.consumptionPolicy,
        consumptionStatuses: { consumptionStatuses.increment($0) })
    let handler = ApplyBatchHandler(
        repository: repository, producer: producer, topics: settings.topics, signing: settings.signing,
        appleSignature: settings.appleSignature,
        outcomes: LabelledCounter(
            registry: registry, namespace: "entitlement_updater", name: "notifications", label: "outcome",
            help: "Verified notifications by outcome"),
        lanes: settings.lanes, transactionSize: settings.transactionSize,
        transactionTimeout: settings.database.transactionTimeout,
        freshness: NewestAppliedNotification(registry: registry))
    var loop = ConsumerLoop(consumer: consumer, handler: handler, readiness: readiness, logger: logger)
    loop.lagMetric = ConsumerLagMetric(registry: registry, group: settings.groupID)
    loop.maximumBatch = settings.maximumBatch
    loop.linger = settings.batchLinger
    let worker = MigratingService(database: database, migrate: settings.migrateOnStart, then: loop, logger: logger)
    let deadLetterConsumer = try KafkaConsumer(
        configuration: KafkaConsumerConfiguration(
            client: settings.kafka, groupID: settings.groupID + "-dead-letters", topics: [settings.topics.rejected],
            sessionTimeout: settings.sessionTimeout),
        logger: logger)
    var deadLetterLoop = ConsumerLoop(
        consumer: deadLetterConsumer,
        handler: DeadLetterRecorder(deadLetters: DeadLetters(client: database, logger: logger)),
        logger: logger)
    deadLetterLoop.lagMetric = ConsumerLagMetric(registry: registry, group: settings.groupID + "-dead-letters")
    var services: [any Service] = [
        database, producer, worker, deadLetterLoop,
        DependencyProbe(
            checks: [
                .init("postgresql", within: .seconds(2)) { try await DatabaseClient.ping(database, logger: logger) },
                .broker(producer),
            ], readiness: readiness, logger: logger),
    ]
    services.append(
        ConsumptionDeadlineWatch(
            client: database, interval: settings.consumptionWatchInterval, statuses: consumptionStatuses, logger: logger
        ))
    if let interval = settings.sweepInterval {
        services.append(
            RenewalSweeperService(
                sweep: RenewalSweep(client: database, logger: logger, topics: settings.topics), interval: interval,
                margin: settings.sweepMargin,
                batch: settings.sweepBatch,
                requests: LabelledCounter(
                    registry: registry, namespace: "entitlement_updater", name: "renewal_sweep", label: "result",
                    help: "Status requests written by the renewal-time sweep"),
                logger: logger))
    }
    if settings.prune.isScheduled {
        services.append(
            PruneService(
                pruning: Pruning(client: database, logger: logger), settings: settings.prune,
                removed: LabelledCounter(
                    registry: registry, namespace: "entitlement_updater", name: "pruned_rows", label: "table",
                    help: "Rows pruned past their retention window, by table (failed: passes that failed)"),
                logger: logger))
    }
    return OperationsServer.build(
        host: settings.http.host, port: settings.http.port, readiness: readiness, registry: registry,
        services: services, logger: logger)
}

/// Applies pending migrations (when asked), then runs a service.
struct MigratingService<Wrapped: Service>: Service {
    let database: PostgresClient
    let migrate: Bool
    let then: Wrapped
    let logger: Logger

    func run() async throws {
        if self.migrate { try await MigrationRunner().migrate(client: self.database, logger: self.logger) }
        try await self.then.run()
    }
}
