@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PipelineRecords
import PostgresNIO
import RdKafka
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

// MARK: - Addresses

/// No server-side request forgery through a registered URL, with the settings a cluster runs with
/// (`WEBHOOK_ALLOW_PRIVATE_ADDRESSES` unset): customer-api refuses URLs that are not https or that name a loopback,
/// link-local (the cloud metadata address), private or CGNAT address; and an endpoint that reached the table anyway
/// (written before a policy change) is refused again by the dispatcher at send time, the attempt logged with why.
@Suite(.serialized) struct WebhookAddressTests {
    @Test func privateAddressesAreRefusedAtRegistrationAndAgainWhenSending() async throws {
        try await withLocalBroker { bootstrap in
            try await withLocalPostgres { databaseURL in
                try await SimHarness.with(customers: 1, seed: 3) { sim in
                    let logger = WebhookEndToEndTests.logger
                    try await KafkaTestClient(bootstrapServers: [bootstrap]).createTopics(
                        PipelineTopics().all.map { ($0, 1) })
                    try await migrateDatabase(try DatabaseSettings(url: databaseURL), logger: logger)
                    let directory = try LocalComponents.temporaryDirectory("webhook-addresses")
                    var environment = try sim.pipelineEnvironment(
                        directory: directory, bootstrap: bootstrap, databaseURL: databaseURL)
                    environment.merge([
                        "WEBHOOK_ENDPOINT_REFRESH_MS": "500", "WEBHOOK_POLL_MS": "200",
                        "WEBHOOK_REQUEST_TIMEOUT_MS": "1000", "WEBHOOK_LEASE_MS": "4000",
                    ]) { _, new in new }
                    environment["WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = nil
                    let fleet = try ServiceFleet(
                        environment: environment, directory: directory, only: ["customer-api", "webhook-dispatcher"])
                    try await fleet.whileRunning(http: sim.http) {
                        let app = sim.app.bundleId
                        let key = try await DatabaseClient.with(try DatabaseSettings(url: databaseURL), logger: logger)
                        {
                            try await APIKeyStore(client: $0, logger: logger).create(
                                bundleId: app, ratePerSecond: 1000, role: "admin"
                            ).token
                        }
                        let base = await fleet.customerAPIAdminURL
                        try await waitUntilCustomerAPIKnows(key: key, baseURL: base, http: sim.http)
                        let admin = Admin(base: base, app: app, key: key, http: sim.http)
                        for url in [
                            "http://hooks.example.com/x", "https://127.0.0.1/x", "https://[::1]/x",
                            "https://169.254.169.254/latest/meta-data", "https://10.1.2.3/x", "https://192.168.0.5/x",
                            "https://100.64.0.1/x", "https://localhost:8443/x", "https://user@hooks.example.com/x",
                        ] {
                            let answer = try await admin.post("webhooks", ["url": url])
                            #expect(answer.status == 400 && answer.body.contains("bad-url"), "\(url): \(answer.body)")
                        }
                        let accepted = try await admin.post("webhooks", ["url": "https://hooks.example.com/x"])
                        #expect(accepted.status == 201, "a public https URL is registered: \(accepted.body)")

                        // An endpoint on loopback that is in the table anyway, and one event for the app.
                        try await DatabaseClient.with(try DatabaseSettings(url: databaseURL), logger: logger) {
                            client in
                            try await client.query(
                                """
                                INSERT INTO webhook_endpoints (id, environment, bundle_id, url, rate_per_second, concurrency)
                                VALUES ('we_loopback', 'Production', \(app), 'https://127.0.0.1:9/hook', 10, 1)
                                """, logger: logger)
                        }
                        try await KafkaTestClient(bootstrapServers: [bootstrap]).produce([
                            ProducerRecord(
                                topic: PipelineTopics().entitlementChanges, key: Array("Production/\(app)/c".utf8),
                                value: Array(
                                    #"{"eventId":"address-check","eventType":"test.received","subject":"s","sequence":1}"#
                                        .utf8),
                                headers: [
                                    KafkaHeader(name: "environment", text: "Production"),
                                    KafkaHeader(name: "bundle-id", text: app),
                                ])
                        ])
                        var refusal: String?
                        _ = try await Polling.until(looks: 600, every: .milliseconds(100)) {
                            let log = try await admin.deliveries("we_loopback", query: "limit=5")
                            refusal = (log.first?["attempts"] as? [[String: Any]])?.first?["error"] as? String
                            return refusal != nil
                        }
                        #expect(
                            refusal?.contains("loopback") == true,
                            "the dispatcher refused the loopback address when sending: \(String(describing: refusal))")
                    }
                }
            }
        }
    }
}
