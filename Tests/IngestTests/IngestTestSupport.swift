import AppStoreModels
import AppStoreSigning
import Foundation
import Hummingbird
import HummingbirdTesting
@testable import Ingest
import JWSVerification
import Logging
import NotificationPipeline
import Prometheus
import RdKafka
import ServiceRuntime
import TestSupport
import X509

/// Builds ingest for tests and signs bodies Apple would post.
enum IngestTestSupport {
    /// Ingest accepting the test app, trusting `roots` (the fixtures' PKI) for the edge verification.
    static func settings(bootstrap: [String], roots: [Certificate], produceTimeout: Duration = .seconds(5)) -> IngestSettings {
        var settings = IngestSettings(
            accepted: AcceptedApps(apps: [AppIdentity(bundleId: SignedFixtures.bundleId, appAppleId: SignedFixtures.appAppleId)]),
            kafka: KafkaClientSettings(bootstrapServers: bootstrap))
        settings.trust.trustedRoots = roots
        settings.http = HTTPSettings(host: "127.0.0.1", port: 0)
        settings.produceTimeout = produceTimeout
        settings.maximumBodyBytes = 64 * 1024
        return settings
    }

    static var quietLogger: Logger {
        var logger = Logger(label: "ingest-test")
        logger.logLevel = .critical
        return logger
    }

    /// Apple's POST body for a signed payload.
    static func body(_ signedPayload: String) -> ByteBuffer {
        ByteBuffer(string: "{\"signedPayload\":\"\(signedPayload)\"}")
    }
}
