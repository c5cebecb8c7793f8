import Foundation
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime

/// Everything refund-resolver reads from its environment (see docs/configuration.md).
struct RefundResolverSettings: Sendable {
    var http = HTTPSettings(port: 8084)
    var accepted: AcceptedApps
    var trust = TrustSettings()
    var api: AppStoreAPISettings
    var kafka: KafkaClientSettings
    var groupID = "refund-resolver"
    var sessionTimeout: Duration = .seconds(45)
    var topics = PipelineTopics()
    /// Apple's per-app limit for Get All Subscription Statuses (50/s in production, 10% of it in sandbox).
    var appRatePerSecond = 50.0
    /// How many replicas share that limit: each takes `appRatePerSecond / replicas`.
    var replicas = 1
    /// Calls in flight at once.
    var concurrency = 8
    /// How long a request failing with retryable errors (429, 5xx, timeouts) keeps being rescheduled, counted from
    /// its first failure, before it goes to the DLQ: an App Store outage delays requests, it does not dead-letter them.
    var giveUpAfter: Duration = .seconds(24 * 3600)
    /// The first reschedule delay (doubled per failure, with jitter).
    var retryBaseDelay: Duration = .seconds(1)
    /// The longest a rescheduled request waits in the delay queue; must stay below the consumer's poll interval.
    var retryMaximumDelay: Duration = .seconds(30)
    /// The reconciler: how often to backfill `onlyFailures` notification history (nil: off).
    var reconcileInterval: Duration?
    /// How far back each reconciler run looks.
    var reconcileWindow: Duration = .seconds(7 * 24 * 3600)

    /// Signs the records it writes to the verified topic.
    var signing: RecordSigner

    /// Settings for tests.
    init(accepted: AcceptedApps, api: AppStoreAPISettings, kafka: KafkaClientSettings, signing: RecordSigner) {
        self.accepted = accepted
        self.api = api
        self.kafka = kafka
        self.signing = signing
    }

    /// Reads the shared settings, the App Store API settings, `RECORD_SIGNING_KEYS`, `RESOLVER_*` and `RECONCILE_*`.
    init(_ settings: EnvironmentSettings) throws {
        self.signing = try RecordSigner(.refundResolver, settings)
        self.accepted = try AcceptedApps(settings)
        self.trust = try TrustSettings(settings)
        self.api = try AppStoreAPISettings(settings, accepted: self.accepted)
        self.kafka = try KafkaClientSettings(settings, clientID: "refund-resolver")
        self.topics = PipelineTopics(settings)
        self.http = try HTTPSettings(settings, defaultPort: 8084)
        self.groupID = settings.string("KAFKA_GROUP_ID", default: self.groupID)
        self.sessionTimeout = try settings.milliseconds("KAFKA_SESSION_TIMEOUT_MS", default: self.sessionTimeout)
        let rate = settings.string("RESOLVER_RATE_PER_SECOND", default: "50")
        guard let appRate = Double(rate), appRate > 0 else {
            throw SettingsError("RESOLVER_RATE_PER_SECOND must be a positive number, not \(rate)")
        }
        self.appRatePerSecond = appRate
        self.replicas = try settings.int("RESOLVER_REPLICAS", default: self.replicas)
        guard self.replicas > 0 else { throw SettingsError("RESOLVER_REPLICAS must be at least 1") }
        self.concurrency = max(1, try settings.int("RESOLVER_CONCURRENCY", default: self.concurrency))
        self.giveUpAfter = try settings.milliseconds("RESOLVER_GIVE_UP_AFTER_MS", default: self.giveUpAfter)
        self.retryBaseDelay = try settings.milliseconds("RESOLVER_RETRY_BASE_MS", default: self.retryBaseDelay)
        self.retryMaximumDelay = try settings.milliseconds("RESOLVER_RETRY_MAX_MS", default: self.retryMaximumDelay)
        guard self.retryMaximumDelay <= .seconds(240) else {
            throw SettingsError("RESOLVER_RETRY_MAX_MS must stay below the 300 s poll interval")
        }
        let interval = try settings.int("RECONCILE_INTERVAL_SECONDS", default: 0)
        self.reconcileInterval = interval > 0 ? .seconds(interval) : nil
        self.reconcileWindow = .seconds(try settings.int("RECONCILE_WINDOW_HOURS", default: 168) * 3600)
    }

    /// This replica's share of the app's rate.
    var ratePerSecond: Double { self.appRatePerSecond / Double(self.replicas) }
}
