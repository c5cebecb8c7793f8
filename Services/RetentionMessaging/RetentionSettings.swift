import AppStoreAPI
import Foundation
import JWSVerification
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
import Storage

/// Everything retention-messaging reads from its environment (see docs/configuration.md and docs/retention.md).
struct RetentionSettings: Sendable {
    var http = HTTPSettings(port: 8086)
    var database: DatabaseSettings
    /// The apps whose requests are answered; each needs its appAppleId (a real-time request names no bundle id).
    var accepted: AcceptedApps
    var trust = TrustSettings()
    var rules: RetentionRules
    /// The key promotional offers are signed with; nil when no rule answers an offer.
    var offers: OfferSigningSettings?
    var kafka: KafkaClientSettings
    var topics = PipelineTopics()
    /// The largest body taken (Apple's request is a JWS of about 4 KB).
    var maximumBodyBytes = 64 * 1024
    /// Certificate chains not seen before validated per second (`RETENTION_NEW_CHAINS_PER_SECOND`); more answer 503.
    var newChainsPerSecond = 20

    /// Settings for tests and tools.
    init(
        database: DatabaseSettings, accepted: AcceptedApps, rules: RetentionRules, kafka: KafkaClientSettings,
        offers: OfferSigningSettings?
    ) {
        self.database = database
        self.accepted = accepted
        self.rules = rules
        self.kafka = kafka
        self.offers = offers
    }

    /// Reads `DATABASE_URL`, the shared HTTP and Kafka settings, `APPSTORE_APPS` (each with its appAppleId),
    /// `APPSTORE_ENVIRONMENTS`, the trust settings, `RETENTION_RULES_FILE`, the offer key (`APPSTORE_OFFER_KEY_*`),
    /// `TOPIC_RETENTION_OFFERED` and `RETENTION_MAX_BODY_BYTES`.
    init(_ settings: EnvironmentSettings) throws {
        self.database = try DatabaseSettings(environment: settings.values)
        self.http = try HTTPSettings(settings, defaultPort: 8086)
        self.accepted = try AcceptedApps(settings)
        let unmatched = self.accepted.apps.filter { $0.appAppleId == nil }.map(\.bundleId)
        guard unmatched.isEmpty else {
            throw SettingsError(
                "APPSTORE_APPS: \(unmatched.joined(separator: ", ")) needs its appAppleId (bundleId:appAppleId): "
                    + "a real-time request names its app only by appAppleId")
        }
        self.trust = try TrustSettings(settings)
        self.kafka = try KafkaClientSettings(settings, clientID: "retention-messaging")
        self.topics = PipelineTopics(settings)
        // The API key is not this service's; when one is mounted beside it, the offer key must still differ from it.
        let apiKeyFile = settings.string("APPSTORE_API_KEY_FILE", default: "")
        let apiKey: APICredentials? =
            FileManager.default.isReadableFile(atPath: apiKeyFile)
            ? try AppStoreAPISettings(settings, accepted: self.accepted).credentials : nil
        self.offers = try OfferSigningSettings(settings, apiKey: apiKey)
        do {
            self.rules = try RetentionRules.load(
                path: try settings.requiredString("RETENTION_RULES_FILE"),
                bundleIds: Set(self.accepted.apps.map(\.bundleId)), canSignOffers: self.offers != nil)
        } catch let error as RetentionRulesError {
            throw SettingsError(error.description)
        }
        self.maximumBodyBytes = max(1024, try settings.int("RETENTION_MAX_BODY_BYTES", default: self.maximumBodyBytes))
        self.newChainsPerSecond = try settings.int("RETENTION_NEW_CHAINS_PER_SECOND", default: self.newChainsPerSecond)
        guard self.newChainsPerSecond >= 1 else {
            throw SettingsError("RETENTION_NEW_CHAINS_PER_SECOND must be at least 1, not \(self.newChainsPerSecond)")
        }
    }
}
