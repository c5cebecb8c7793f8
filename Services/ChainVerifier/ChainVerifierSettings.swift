import AppStoreModels
import Foundation
import JWSVerification
import NotificationPipeline
import RdKafka
import ServiceRuntime
import X509

/// Everything the chain verifier reads from its environment (see the README's configuration table).
struct ChainVerifierSettings: Sendable {
    var host = "0.0.0.0"
    var port = 8081
    var apps: [AppIdentity]
    var environments: [AppStoreModels.Environment] = [.production, .sandbox]
    /// Roots for Production and Sandbox chains. Default: Apple Root CA G3.
    var trustedRoots: [Certificate] = [AppleRootCertificates.rootCAG3]
    /// StoreKit test certificates for Xcode and LocalTesting (only used when those environments are enabled).
    var storeKitTestCertificates: [Certificate] = []
    var kafka: KafkaClientSettings
    var groupID = "chain-verifier"
    var sessionTimeout: Duration = .seconds(45)
    var topics = PipelineTopics()
    var maximumBatch = 500

    /// Settings for tests and tools.
    init(apps: [AppIdentity], kafka: KafkaClientSettings) {
        self.apps = apps
        self.kafka = kafka
    }

    /// Reads `HTTP_HOST`, `HTTP_PORT`, `APPSTORE_APPS`, `APPSTORE_ENVIRONMENTS`, `APPSTORE_ROOT_CERTIFICATES`,
    /// `APPSTORE_STOREKIT_CERTIFICATES`, `KAFKA_BOOTSTRAP_SERVERS`, `KAFKA_GROUP_ID`, `KAFKA_SESSION_TIMEOUT_MS`,
    /// `CHAIN_VERIFIER_BATCH`, `TOPIC_RAW`, `TOPIC_VERIFIED` and `TOPIC_REJECTED`.
    init(_ settings: EnvironmentSettings) throws {
        self.apps = try ConfiguredApps.parse(settings.requiredString("APPSTORE_APPS"))
        self.environments = try ConfiguredApps.environments(settings.list("APPSTORE_ENVIRONMENTS", default: ["Production", "Sandbox"]))
        let roots = try settings.list("APPSTORE_ROOT_CERTIFICATES").map(Self.loadCertificate)
        if !roots.isEmpty { self.trustedRoots = roots }
        self.storeKitTestCertificates = try settings.list("APPSTORE_STOREKIT_CERTIFICATES").map(Self.loadCertificate)
        self.kafka = KafkaClientSettings(
            bootstrapServers: settings.list("KAFKA_BOOTSTRAP_SERVERS", default: ["127.0.0.1:9092"]), clientID: "chain-verifier")
        self.host = settings.string("HTTP_HOST", default: self.host)
        self.port = try settings.int("HTTP_PORT", default: self.port)
        self.groupID = settings.string("KAFKA_GROUP_ID", default: self.groupID)
        self.sessionTimeout = try settings.milliseconds("KAFKA_SESSION_TIMEOUT_MS", default: self.sessionTimeout)
        self.maximumBatch = try settings.int("CHAIN_VERIFIER_BATCH", default: self.maximumBatch)
        self.topics.raw = settings.string("TOPIC_RAW", default: self.topics.raw)
        self.topics.verified = settings.string("TOPIC_VERIFIED", default: self.topics.verified)
        self.topics.rejected = settings.string("TOPIC_REJECTED", default: self.topics.rejected)
    }

    /// One verifier per enabled environment, all sharing the apps and roots.
    func makeVerifiers() throws -> [AppStoreModels.Environment: SignedDataVerifier] {
        var verifiers: [AppStoreModels.Environment: SignedDataVerifier] = [:]
        for environment in self.environments {
            verifiers[environment] = SignedDataVerifier(configuration: try VerifierConfiguration(
                environment: environment, apps: self.apps, trustedRoots: self.trustedRoots,
                storeKitTestCertificates: self.storeKitTestCertificates))
        }
        return verifiers
    }

    /// Reads a DER or PEM certificate file.
    private static func loadCertificate(_ path: String) throws -> Certificate {
        guard let data = FileManager.default.contents(atPath: path) else { throw SettingsError("cannot read certificate \(path)") }
        return try CertificateLoading.certificate(from: Array(data), source: path)
    }
}
