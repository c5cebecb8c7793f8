import Entitlements
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
import Storage

/// Everything the entitlement updater reads from its environment (see docs/configuration.md).
struct EntitlementUpdaterSettings: Sendable {
    var http = HTTPSettings(port: 8082)
    var database: DatabaseSettings
    var kafka: KafkaClientSettings
    var groupID = "entitlement-updater"
    var sessionTimeout: Duration = .seconds(45)
    var topics = PipelineTopics()
    var maximumBatch = 200
    /// Subjects applied concurrently (each subject's notifications stay in order).
    var lanes = 4
    /// How long a consumer batch keeps filling after its first record: bigger transactions under load.
    var batchLinger: Duration = .milliseconds(20)
    /// How many inputs of one lane one transaction applies at most (one commit for all of them).
    var transactionSize = 50
    /// Which entitlement each product grants (`ENTITLEMENT_MAP`, `product=entitlement,…`; default: each its own).
    var catalog = EntitlementCatalog()
    /// Whether to apply pending migrations at start (safe with several replicas: an advisory lock serializes them).
    var migrateOnStart = true
    /// The renewal-time sweep: how often (nil: off), how long after an active entitlement's end, how many per pass.
    var sweepInterval: Duration? = .seconds(60)
    var sweepMargin: Duration = .seconds(3600)
    var sweepBatch = 100
    /// Pruning: how often, in what batches, with which windows (`PRUNE_*`, `RETAIN_*`).
    var prune = PruneSettings()
    /// How consumption requests are answered (`CONSUMPTION_POLICY`; nil: recorded and published, not answered),
    /// and how often requests past their deadline are reported (`CONSUMPTION_WATCH_INTERVAL_MS`).
    var consumptionPolicy: ConsumptionPolicy?
    var consumptionWatchInterval: Duration = .seconds(60)
    /// Each producer's keys: a verified-topic record is applied only when its producer signed it (``RecordVerifier``).
    var signing: RecordVerifier
    /// Apple's signature checked again on every verified notification (`UPDATER_APPLE_SIGNATURE_CHECK`, default
    /// `required`; nil: off). Settings built in code start without it.
    var appleSignature: AppleSignatureCheck?

    init(database: DatabaseSettings, kafka: KafkaClientSettings, signing: RecordVerifier) {
        self.database = database
        self.kafka = kafka
        self.signing = signing
    }

    /// Reads `DATABASE_URL`, the shared Kafka/HTTP/topic settings, `KAFKA_GROUP_ID`, `KAFKA_SESSION_TIMEOUT_MS`,
    /// `UPDATER_BATCH`, `UPDATER_BATCH_LINGER_MS`, `UPDATER_LANES`, `UPDATER_TRANSACTION_SIZE`, `ENTITLEMENT_MAP`, `MIGRATE_ON_START` and `RENEWAL_SWEEP_INTERVAL_MS` (0: off),
    /// `RENEWAL_SWEEP_MARGIN_MS`, `RENEWAL_SWEEP_BATCH`, `CONSUMPTION_POLICY`, `CONSUMPTION_WATCH_INTERVAL_MS`, `RECORD_VERIFYING_KEYS`,
    /// `UPDATER_APPLE_SIGNATURE_CHECK` (with the apps and roots it needs).
    init(_ settings: EnvironmentSettings) throws {
        self.signing = try RecordVerifier(settings)
        self.appleSignature = try AppleSignatureCheck.configured(settings)
        self.database = try DatabaseSettings(environment: settings.values)
        self.kafka = try KafkaClientSettings(settings, clientID: "entitlement-updater")
        self.topics = PipelineTopics(settings)
        self.http = try HTTPSettings(settings, defaultPort: 8082)
        self.groupID = settings.string("KAFKA_GROUP_ID", default: self.groupID)
        self.sessionTimeout = try settings.milliseconds("KAFKA_SESSION_TIMEOUT_MS", default: self.sessionTimeout)
        self.maximumBatch = try settings.int("UPDATER_BATCH", default: self.maximumBatch)
        self.lanes = try settings.int("UPDATER_LANES", default: self.lanes)
        self.batchLinger = try settings.milliseconds("UPDATER_BATCH_LINGER_MS", default: self.batchLinger)
        self.transactionSize = max(1, try settings.int("UPDATER_TRANSACTION_SIZE", default: self.transactionSize))
        do {
            self.catalog = try EntitlementCatalog(parsing: settings.string("ENTITLEMENT_MAP", default: ""))
        } catch {
            throw SettingsError("ENTITLEMENT_MAP: \(error)")
        }
        self.migrateOnStart = try settings.bool("MIGRATE_ON_START", default: true)
        let interval = try settings.milliseconds("RENEWAL_SWEEP_INTERVAL_MS", default: self.sweepInterval ?? .zero)
        self.sweepInterval = interval > .zero ? interval : nil
        self.sweepMargin = try settings.milliseconds("RENEWAL_SWEEP_MARGIN_MS", default: self.sweepMargin)
        self.sweepBatch = max(1, try settings.int("RENEWAL_SWEEP_BATCH", default: self.sweepBatch))
        self.prune = try PruneSettings(settings)
        do {
            self.consumptionPolicy = try ConsumptionPolicy(parsing: settings.string("CONSUMPTION_POLICY", default: ""))
        } catch {
            throw SettingsError("CONSUMPTION_POLICY: \(error)")
        }
        self.consumptionWatchInterval = try settings.milliseconds(
            "CONSUMPTION_WATCH_INTERVAL_MS", default: self.consumptionWatchInterval)
    }
}
