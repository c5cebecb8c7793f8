import RdKafka
import ServiceRuntime
import Storage

/// Everything the event publisher reads from its environment (see docs/configuration.md).
struct EventPublisherSettings: Sendable {
    var http = HTTPSettings(port: 8083)
    var database: DatabaseSettings
    var kafka: KafkaClientSettings
    /// Rows per relay transaction.
    var batch = 500
    /// The pause when the outbox is empty.
    var idlePause: Duration = .milliseconds(50)

    init(database: DatabaseSettings, kafka: KafkaClientSettings) {
        self.database = database
        self.kafka = kafka
    }

    /// Reads `DATABASE_URL`, the shared Kafka/HTTP settings, `PUBLISHER_BATCH` and `PUBLISHER_IDLE_MS`.
    init(_ settings: EnvironmentSettings) throws {
        self.database = try DatabaseSettings(environment: settings.values)
        self.kafka = try KafkaClientSettings(settings, clientID: "event-publisher")
        self.http = try HTTPSettings(settings, defaultPort: 8083)
        self.batch = try settings.int("PUBLISHER_BATCH", default: self.batch)
        self.idlePause = try settings.milliseconds("PUBLISHER_IDLE_MS", default: self.idlePause)
    }
}
