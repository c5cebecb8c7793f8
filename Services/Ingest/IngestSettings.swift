import AppStoreModels
import JWSVerification
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime

/// Everything ingest reads from its environment (see docs/configuration.md).
struct IngestSettings: Sendable {
    var http = HTTPSettings(port: 8080)
    /// The largest body accepted; Apple's notifications are about 20 KB.
    var maximumBodyBytes = 256 * 1024
    /// How long a request waits for the broker's acknowledgement before answering 503.
    var produceTimeout: Duration = .seconds(5)
    var accepted: AcceptedApps
    var kafka: KafkaClientSettings
    var topics = PipelineTopics()
    /// The roots the outer JWS must chain to (the chain-verifier's, `APPSTORE_ROOT_CERTIFICATES`).
    var trust = TrustSettings()
    /// Whether the outer JWS is verified before anything is produced (`INGEST_VERIFY`, default true).
    var verifyAtEdge = true
    /// Chains not seen before that may be validated per second (`INGEST_NEW_CHAINS_PER_SECOND`); more answer 503.
    /// Apple's genuine chain is cached after its first notification, so this bounds only forgeries' work.
    var newChainsPerSecond = 20

    /// Settings for tests and tools.
    init(accepted: AcceptedApps, kafka: KafkaClientSettings) {
        self.accepted = accepted
        self.kafka = kafka
    }

    /// Reads the shared settings plus `INGEST_MAX_BODY_BYTES`, `INGEST_PRODUCE_TIMEOUT_MS`, the trust settings,
    /// `INGEST_VERIFY` and `INGEST_NEW_CHAINS_PER_SECOND`.
    init(_ settings: EnvironmentSettings) throws {
        self.accepted = try AcceptedApps(settings)
        self.kafka = try KafkaClientSettings(settings, clientID: "ingest")
        self.topics = PipelineTopics(settings)
        self.http = try HTTPSettings(settings, defaultPort: 8080)
        self.maximumBodyBytes = try settings.int("INGEST_MAX_BODY_BYTES", default: self.maximumBodyBytes)
        self.produceTimeout = try settings.milliseconds("INGEST_PRODUCE_TIMEOUT_MS", default: self.produceTimeout)
        self.trust = try TrustSettings(settings)
        self.verifyAtEdge = try settings.bool("INGEST_VERIFY", default: true)
        self.newChainsPerSecond = max(
            1, try settings.int("INGEST_NEW_CHAINS_PER_SECOND", default: self.newChainsPerSecond))
    }
}
