import AppStoreModels
import AppStoreSigning
import Foundation
import Hummingbird
import HummingbirdTesting
import JWSVerification
import Logging
import NotificationPipeline
import Prometheus
import RdKafka
import ServiceRuntime
import TestSupport
import X509

@testable import Ingest

/// Builds ingest for tests and signs bodies Apple would post.
enum IngestTestSupport {
    /// Ingest accepting the test app, trusting `roots` (the fixtures' PKI) for the edge verification.
    static func settings(bootstrap: [String], roots: [Certificate], produceTimeout: Duration = .seconds(5))
        -> IngestSettings
    {
        var settings = IngestSettings(
            accepted: AcceptedApps(apps: [
                AppIdentity(bundleId: SignedFixtures.bundleId, appAppleId: SignedFixtures.appAppleId)
            ]),
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

    /// The environment of the ingest binary for the test app, trusting `fixtures`' root (written to
    /// `directory`), on a free loopback port; `extra` adds or overrides variables. Returns it and the base URL.
    static func binaryEnvironment(bootstrap: String, fixtures: SignedFixtures, directory: URL, extra: [String: String])
        throws
        -> (environment: [String: String], base: String)
    {
        let root = directory.appendingPathComponent("root.der")
        try Data(fixtures.pki.rootDER).write(to: root)
        let port = String(try LocalComponents.freePortBelowEphemeralRange())
        let environment = [
            "APPSTORE_APPS": "\(SignedFixtures.bundleId):\(SignedFixtures.appAppleId)",
            "APPSTORE_ENVIRONMENTS": "Sandbox",
            "APPSTORE_ROOT_CERTIFICATES": root.path, "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "HTTP_HOST": "127.0.0.1",
            "HTTP_PORT": port,
            "LOG_LEVEL": "error",
        ].merging(extra) { _, new in new }
        return (environment, "http://127.0.0.1:\(port)")
    }
}
