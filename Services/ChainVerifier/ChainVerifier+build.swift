import Hummingbird
import Logging
import NotificationPipeline
import PipelineRecords
import Prometheus
import RdKafka
import ServiceRuntime

/// Builds the chain verifier: the consumer loop over the raw topic, the producer for the verified and
/// rejected topics, and the operations endpoints. Shutdown stops the loop first (it finishes its batch and
/// leaves the group), then flushes the producer. Tests call this too.
func buildApplication(
    settings: ChainVerifierSettings, registry: PrometheusCollectorRegistry, logger: Logger
) throws -> some ApplicationProtocol {
    // librdkafka's idempotent producer sends no further request for a partition while more than five of its
    // messages await the broker's answer, yet it treats a batch whose linger has passed as due: its broker thread
    // then polls without a timeout until the answer comes (~12 % of this service's CPU with the pipeline's 2 ms and
    // a ~5 ms answer). Lingering longer than the broker takes to answer keeps the next batch from falling due
    // meanwhile. A batch's tail goes without it (``VerifyBatchHandler`` asks the producer to send it at once), so the
    // linger is paid only by outputs followed by more of the same batch, not by a lone notification at a quiet hour.
    // `KAFKA_PROPERTIES` (`linger.ms=…`) overrides it.
    var producerConfiguration = KafkaProducerConfiguration(client: settings.kafka)
    producerConfiguration.linger = .milliseconds(10)
    let producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
    let consumer = try KafkaConsumer(
        configuration: KafkaConsumerConfiguration(
            client: settings.kafka, groupID: settings.groupID, topics: [settings.topics.raw],
            sessionTimeout: settings.sessionTimeout),
        logger: logger)
    let readiness = Readiness()
    let handler = VerifyBatchHandler(
        verification: NotificationVerification(
            verifiers: try settings.makeVerifiers(), topics: settings.topics, signing: settings.signing),
        producer: producer, metrics: ChainVerifierMetrics(registry: registry))
    var loop = ConsumerLoop(consumer: consumer, handler: handler, readiness: readiness, logger: logger)
    loop.lagMetric = ConsumerLagMetric(registry: registry, group: settings.groupID)
    loop.maximumBatch = settings.maximumBatch
    return OperationsServer.build(
        host: settings.http.host, port: settings.http.port, readiness: readiness, registry: registry,
        services: [producer, loop, DependencyProbe(checks: [.broker(producer)], readiness: readiness, logger: logger)],
        logger: logger)
}
