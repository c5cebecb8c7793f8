import AppStoreModels
import JWSVerification
import NotificationPipeline
import RdKafka
import ServiceRuntime

/// Everything ingest reads from its environment (see the README's configuration table).
struct IngestSettings: Sendable {
    var host = "0.0.0.0"
    var port = 8080
    /// The largest body accepted; Apple's notifications are about 20 KB.
    var maximumBodyBytes = 256 * 1024
    /// How long a request waits for the broker's acknowledgement before answering 503.
    var produceTimeout: Duration = .seconds(5)
    var apps: [AppIdentity]
    var environments: [Environment] = [.production, .sandbox]
    var kafka: KafkaClientSettings
    var topics = PipelineTopics()

    /// Settings for tests and tools.
    init(apps: [AppIdentity], kafka: KafkaClientSettings) {
        self.apps = apps
        self.kafka = kafka
    }

    /// Reads `HTTP_HOST`, `HTTP_PORT`, `INGEST_MAX_BODY_BYTES`, `INGEST_PRODUCE_TIMEOUT_MS`, `APPSTORE_APPS`,
    /// `APPSTORE_ENVIRONMENTS`, `KAFKA_BOOTSTRAP_SERVERS` and `TOPIC_RAW`.
    init(_ settings: EnvironmentSettings) throws {
        self.apps = try ConfiguredApps.parse(settings.requiredString("APPSTORE_APPS"))
        self.environments = try ConfiguredApps.environments(settings.list("APPSTORE_ENVIRONMENTS", default: ["Production", "Sandbox"]))
        self.kafka = KafkaClientSettings(
            bootstrapServers: settings.list("KAFKA_BOOTSTRAP_SERVERS", default: ["127.0.0.1:9092"]), clientID: "ingest")
        self.host = settings.string("HTTP_HOST", default: self.host)
        self.port = try settings.int("HTTP_PORT", default: self.port)
        self.maximumBodyBytes = try settings.int("INGEST_MAX_BODY_BYTES", default: self.maximumBodyBytes)
        self.produceTimeout = try settings.milliseconds("INGEST_PRODUCE_TIMEOUT_MS", default: self.produceTimeout)
        self.topics.raw = settings.string("TOPIC_RAW", default: self.topics.raw)
    }
}
