import Hummingbird
import Logging
import PostgresNIO
import Prometheus
import RdKafka
import ServiceRuntime
import Storage

/// Builds the event publisher: database client, producer and the relay loop behind the operations
/// endpoints. Tests call this too.
func buildApplication(settings: EventPublisherSettings, registry: PrometheusCollectorRegistry, logger: Logger) throws
    -> some ApplicationProtocol
{
    let database = PostgresClient(configuration: settings.database.clientConfiguration, backgroundLogger: logger)
    let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(client: settings.kafka), logger: logger)
    let readiness = Readiness()
    let publisher = OutboxPublisher(
        relay: OutboxRelay(client: database, logger: logger), producer: producer, settings: settings,
        readiness: readiness,
        published: registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "event_publisher", metricName: "published", unitName: "total", helpText: "Events published")),
        logger: logger)
    return OperationsServer.build(
        host: settings.http.host, port: settings.http.port, readiness: readiness, registry: registry,
        services: [
            database, producer, publisher,
            DependencyProbe(
                checks: [
                    .init("postgresql", within: .seconds(2)) {
                        try await DatabaseClient.ping(database, logger: logger)
                    }, .broker(producer),
                ], readiness: readiness, logger: logger),
        ],
        logger: logger)
}
