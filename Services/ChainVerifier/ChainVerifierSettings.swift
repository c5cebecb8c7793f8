import AppStoreModels
import JWSVerification
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime

/// Everything the chain verifier reads from its environment (see docs/configuration.md).
struct ChainVerifierSettings: Sendable {
    var http = HTTPSettings(port: 8081)
    var accepted: AcceptedApps
    /// Roots (default Apple Root CA G3) and StoreKit test certificates signed data must chain to.
    var trust = TrustSettings()
    var kafka: KafkaClientSettings
    var groupID = "chain-verifier"
    var sessionTimeout: Duration = .seconds(45)
    var topics = PipelineTopics()
    var maximumBatch = 500
    /// The key the verified records are signed with (the updater applies only signed records).
    var signing: RecordSigner

    /// Settings for tests and tools.
    init(accepted: AcceptedApps, kafka: KafkaClientSettings, signing: RecordSigner) {
        self.accepted = accepted
        self.kafka = kafka
        self.signing = signing
    }

    /// Reads the shared settings plus `APPSTORE_ROOT_CERTIFICATES`, `APPSTORE_STOREKIT_CERTIFICATES`,
    /// `KAFKA_GROUP_ID`, `KAFKA_SESSION_TIMEOUT_MS`, `CHAIN_VERIFIER_BATCH` and `RECORD_SIGNING_KEYS`.
    init(_ settings: EnvironmentSettings) throws {
        self.signing = try RecordSigner(.chainVerifier, settings)
        self.accepted = try AcceptedApps(settings)
        self.kafka = try KafkaClientSettings(settings, clientID: "chain-verifier")
        self.topics = PipelineTopics(settings)
        self.http = try HTTPSettings(settings, defaultPort: 8081)
        self.trust = try TrustSettings(settings)
        self.groupID = settings.string("KAFKA_GROUP_ID", default: self.groupID)
        self.sessionTimeout = try settings.milliseconds("KAFKA_SESSION_TIMEOUT_MS", default: self.sessionTimeout)
        self.maximumBatch = try settings.int("CHAIN_VERIFIER_BATCH", default: self.maximumBatch)
    }

    /// One verifier per enabled environment, all sharing the apps and roots.
    func makeVerifiers() throws -> [AppStoreModels.Environment: SignedDataVerifier] {
        try self.trust.makeVerifiers(for: self.accepted)
    }
}
