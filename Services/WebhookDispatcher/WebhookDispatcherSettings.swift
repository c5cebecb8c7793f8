import Foundation
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
import Storage
import Webhooks

/// Everything webhook-dispatcher reads from its environment (see docs/configuration.md).
struct WebhookDispatcherSettings: Sendable {
    var http = HTTPSettings(port: 8087)
    var database: DatabaseSettings
    var kafka: KafkaClientSettings
    var groupID = "webhook-dispatcher"
    var sessionTimeout: Duration = .seconds(45)
    var topics = PipelineTopics()
    /// Where endpoint URLs may point: https and public addresses only, unless allowed (local runs, tests).
    var addresses = EndpointAddressPolicy()
    /// How long one delivery may take before it counts as failed.
    var requestTimeout: Duration = .seconds(10)
    /// When a failed delivery is tried again, and for how long before its endpoint is disabled.
    var schedule = DeliverySchedule()
    /// How often each endpoint's backlog is looked at when nothing woke it (retries coming due, other replicas' rows),
    /// and how often the brokers are asked whether the intake has queued every event (``IntakeWatch``).
    var pollInterval: Duration = .seconds(1)
    /// How often the endpoints (added, disabled, secrets rotated) are read again.
    var endpointRefresh: Duration = .seconds(5)
    /// How long a delivery stays leased to this replica before another may take it (it was killed).
    var lease: Duration = .seconds(60)
    /// How long a delivery waits at least for its subject's previous event (read from another topic or partition) to
    /// be queued; it also waits until the intake is seen caught up after that (``IntakeWatch``).
    var orderWait: Duration = .seconds(5)
    /// How many replicas share each endpoint's rate and concurrency: each replica takes its share (rounded up, at least
    /// one), so the endpoint never sees more than it was registered with while at most this many replicas run.
    var replicas = 1
    /// How long delivered deliveries stay in the delivery log.
    var keepDelivered: Duration = .seconds(7 * 86_400)

    /// Settings for tests.
    init(database: DatabaseSettings, kafka: KafkaClientSettings) {
        self.database = database
        self.kafka = kafka
    }

    /// Reads `DATABASE_URL`, the shared Kafka/HTTP settings and `WEBHOOK_*`.
    init(_ settings: EnvironmentSettings) throws {
        self.database = try DatabaseSettings(environment: settings.values)
        self.kafka = try KafkaClientSettings(settings, clientID: "webhook-dispatcher")
        self.topics = PipelineTopics(settings)
        self.http = try HTTPSettings(settings, defaultPort: 8087)
        self.groupID = settings.string("KAFKA_GROUP_ID", default: self.groupID)
        self.sessionTimeout = try settings.milliseconds("KAFKA_SESSION_TIMEOUT_MS", default: self.sessionTimeout)
        self.addresses = EndpointAddressPolicy(
            allowsPrivate: try settings.bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", default: false))
        self.requestTimeout = try settings.milliseconds("WEBHOOK_REQUEST_TIMEOUT_MS", default: self.requestTimeout)
        self.schedule.base = try Self.seconds(settings, "WEBHOOK_RETRY_BASE_MS", self.schedule.base)
        self.schedule.maximumDelay = try Self.seconds(settings, "WEBHOOK_RETRY_MAX_MS", self.schedule.maximumDelay)
        self.schedule.horizon = try Self.seconds(settings, "WEBHOOK_RETRY_HORIZON_MS", self.schedule.horizon)
        self.pollInterval = try settings.milliseconds("WEBHOOK_POLL_MS", default: self.pollInterval)
        self.endpointRefresh = try settings.milliseconds("WEBHOOK_ENDPOINT_REFRESH_MS", default: self.endpointRefresh)
        self.lease = try settings.milliseconds("WEBHOOK_LEASE_MS", default: self.lease)
        self.orderWait = try settings.milliseconds("WEBHOOK_ORDER_WAIT_MS", default: self.orderWait)
        self.replicas = try settings.int("WEBHOOK_REPLICAS", default: self.replicas)
        guard self.replicas >= 1 else { throw SettingsError("WEBHOOK_REPLICAS must be at least 1") }
        self.keepDelivered = .seconds(try settings.int("WEBHOOK_KEEP_DELIVERED_HOURS", default: 168) * 3600)
        try self.validate()
    }

    /// A bad combination stops the service at start.
    func validate() throws(SettingsError) {
        guard self.requestTimeout > .zero, self.pollInterval > .zero, self.endpointRefresh > .zero else {
            throw SettingsError(
                "WEBHOOK_REQUEST_TIMEOUT_MS, WEBHOOK_POLL_MS and WEBHOOK_ENDPOINT_REFRESH_MS must be positive")
        }
        guard self.schedule.base > 0, self.schedule.maximumDelay >= self.schedule.base,
            self.schedule.horizon >= self.schedule.maximumDelay
        else {
            throw SettingsError(
                "WEBHOOK_RETRY_BASE_MS ≤ WEBHOOK_RETRY_MAX_MS ≤ WEBHOOK_RETRY_HORIZON_MS, all positive")
        }
        guard self.lease >= self.requestTimeout * 2 else {
            throw SettingsError("WEBHOOK_LEASE_MS must be at least twice WEBHOOK_REQUEST_TIMEOUT_MS")
        }
    }

    /// This replica's share of a registered rate or concurrency.
    func share(_ value: Int) -> Int { max(1, (value + self.replicas - 1) / self.replicas) }

    /// A setting in milliseconds as seconds.
    private static func seconds(_ settings: EnvironmentSettings, _ name: String, _ defaultValue: TimeInterval) throws
        -> TimeInterval
    {
        let value = try settings.milliseconds(name, default: .milliseconds(Int64(defaultValue * 1000)))
        return Double(value.components.seconds) + Double(value.components.attoseconds) / 1e18
    }
}

extension Duration {
    /// The duration in seconds.
    var inSeconds: TimeInterval { Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18 }
}
