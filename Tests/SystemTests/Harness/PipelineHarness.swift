import AppStoreModels
import Foundation
import JWSVerification
import Logging
import NotificationPipeline
import PostgresNIO
import Prometheus
import RdKafka
import ServiceLifecycle
import ServiceRuntime
import Storage
import TestSupport

@testable import AppStoreSimKit
@testable import ChainVerifier
@testable import EntitlementUpdater
@testable import EventPublisher
@testable import Ingest
@testable import RefundResolver

/// The whole pipeline in-process (ingest → chain-verifier → entitlement-updater ⇄ refund-resolver →
/// event-publisher) against a real broker, a real PostgreSQL and the sim, built with the services' own
/// `buildApplication` functions.
enum PipelineHarness {
    /// A service group of every service, configured for the sim; `ingestPort` is where ingest listens.
    static func services(
        sim: SimHarness, bootstrap: String, databaseURL: String, ingestPort: Int, resolverRate: Double = 20,
        reconcileInterval: Duration? = nil, logger: Logger
    ) throws -> ServiceGroup {
        let kafka = KafkaClientSettings(bootstrapServers: [bootstrap])
        let accepted = AcceptedApps(apps: [sim.app], environments: [.production])
        var ingest = IngestSettings(accepted: accepted, kafka: kafka)
        ingest.http = HTTPSettings(host: "127.0.0.1", port: ingestPort)
        ingest.trust = sim.trust
        var verifier = ChainVerifierSettings(
            accepted: accepted, kafka: kafka, signing: TestRecordSigning.signer(.chainVerifier))
        verifier.http = HTTPSettings(host: "127.0.0.1", port: 0)
        verifier.trust = sim.trust
        verifier.sessionTimeout = .seconds(6)
        let database = try DatabaseSettings(url: databaseURL)
        var updater = EntitlementUpdaterSettings(database: database, kafka: kafka, signing: TestRecordSigning.verifier)
        updater.http = HTTPSettings(host: "127.0.0.1", port: 0)
        updater.sessionTimeout = .seconds(6)
        updater.appleSignature = AppleSignatureCheck(verifiers: try sim.trust.makeVerifiers(for: accepted))
        var publisher = EventPublisherSettings(database: database, kafka: kafka)
        publisher.http = HTTPSettings(host: "127.0.0.1", port: 0)
        var resolver = RefundResolverSettings(
            accepted: accepted, api: try sim.apiSettings(), kafka: kafka,
            signing: TestRecordSigning.signer(.refundResolver))
        resolver.trust = sim.trust
        resolver.http = HTTPSettings(host: "127.0.0.1", port: 0)
        resolver.sessionTimeout = .seconds(6)
        resolver.appRatePerSecond = resolverRate
        resolver.retryBaseDelay = .milliseconds(200)
        resolver.retryMaximumDelay = .seconds(2)
        resolver.reconcileInterval = reconcileInterval
        resolver.reconcileWindow = .seconds(90 * 86_400)
        let services: [any Service] = [
            try Ingest.buildApplication(settings: ingest, registry: PrometheusCollectorRegistry(), logger: logger),
            try ChainVerifier.buildApplication(
                settings: verifier, registry: PrometheusCollectorRegistry(), logger: logger),
            try EntitlementUpdater.buildApplication(
                settings: updater, registry: PrometheusCollectorRegistry(), logger: logger),
            try EventPublisher.buildApplication(
                settings: publisher, registry: PrometheusCollectorRegistry(), logger: logger),
            try RefundResolver.buildApplication(
                settings: resolver, registry: PrometheusCollectorRegistry(), logger: logger),
        ]
        return ServiceGroup(configuration: .init(services: services, logger: logger))
    }

    /// The entitlements stored, as the sim states expectations.
    static func storedEntitlements(client: PostgresClient, logger: Logger) async throws -> Set<String> {
        var rows = Set<String>()
        let query = try await client.query(
            "SELECT environment, customer, product_id, active, revoked_at IS NOT NULL FROM entitlements", logger: logger
        )
        for try await (environment, customer, product, active, revoked) in query.decode(
            (String, String, String, Bool, Bool).self)
        {
            rows.insert("\(environment) \(customer) \(product) active=\(active) revoked=\(revoked)")
        }
        return rows
    }

    /// The sim's expectations in the same form.
    static func expected(_ sim: SimHarness) -> Set<String> {
        Set(
            sim.simulator.scenario.expected.map {
                "\($0.environment) \($0.customer) \($0.productId) active=\($0.active) revoked=\($0.revoked)"
            })
    }

    /// Polls the database until it holds exactly the sim's expected entitlements; returns the last difference.
    static func waitForExpectedState(_ sim: SimHarness, databaseURL: String, timeout: Duration, logger: Logger)
        async throws -> (missing: Set<String>, extra: Set<String>)
    {
        let expected = Self.expected(sim)
        return try await DatabaseClient.with(try DatabaseSettings(url: databaseURL), logger: logger) { client in
            var difference: (missing: Set<String>, extra: Set<String>) = (expected, [])
            try await Polling.until(
                looks: Polling.looks(in: timeout, every: .milliseconds(500)), every: .milliseconds(500)
            ) {
                let stored = try await Self.storedEntitlements(client: client, logger: logger)
                difference = (expected.subtracting(stored), stored.subtracting(expected))
                return difference.missing.isEmpty && difference.extra.isEmpty
            }
            return difference
        }
    }
}
