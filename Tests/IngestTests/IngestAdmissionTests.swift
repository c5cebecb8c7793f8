import AppStoreModels
import AppStoreSigning
import Foundation
import Hummingbird
import HummingbirdTesting
import JWSVerification
import NotificationPipeline
import PipelineRecords
import Prometheus
import RdKafka
import TestSupport
import Testing

@testable import Ingest

/// Ingest against a real broker: what it accepts lands on the raw topic exactly as posted, keyed by subject;
/// what it refuses gets a 4xx JSON error and produces nothing.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct IngestAdmissionTests {
    let fixtures: SignedFixtures

    init() throws {
        self.fixtures = try SignedFixtures()
    }

    /// Bodies that must be refused, with the status and error code.
    func refusedBodies() throws -> [(String, ByteBuffer, Int, String)] {
        let valid = try self.fixtures.signedNotification()
        let parts = valid.split(separator: ".").map(String.init)
        let signer = self.fixtures.signer
        var unknownApp = SignedFixtures.notification()
        unknownApp.data?.bundleId = "com.not.configured"
        var noUUID = SignedFixtures.notification()
        noUUID.notificationUUID = nil
        return [
            ("/notifications", ByteBuffer(string: "not json"), 400, "not-json"),
            ("/notifications", ByteBuffer(string: "{\"other\":1}"), 400, "no-signed-payload"),
            ("/notifications", IngestTestSupport.body("a.b"), 400, "not-a-jws"),
            ("/notifications", IngestTestSupport.body("!!!.???.###"), 400, "not-a-jws"),
            (
                "/notifications",
                IngestTestSupport.body(
                    try signer.sign(payloadJSON: Array("{}".utf8), header: .init(alg: "HS256", x5c: fixtures.pki.x5c))),
                400, "bad-algorithm"
            ),
            (
                "/notifications",
                IngestTestSupport.body(
                    try signer.sign(
                        payloadJSON: Array("{}".utf8), header: .init(x5c: Array(fixtures.pki.x5c.prefix(2))))), 400,
                "bad-certificate-chain"
            ),
            (
                "/notifications",
                IngestTestSupport.body(
                    [parts[0], AppStoreSigner.base64URL(Array("[1]".utf8)), parts[2]].joined(separator: ".")), 400,
                "bad-payload"
            ),
            ("/notifications", IngestTestSupport.body(try signer.sign(noUUID)), 400, "bad-payload"),
            (
                "/notifications", IngestTestSupport.body(try AppStoreSigner(pki: try TestPKI()).sign(unknownApp)), 403,
                "verification-failed"
            ),
            (
                "/notifications", IngestTestSupport.body(try fixtures.signedNotification(environment: .xcode)), 400,
                "unknown-environment"
            ),
            ("/notifications/production", IngestTestSupport.body(valid), 400, "wrong-environment"),
            ("/notifications", ByteBuffer(repeating: UInt8(ascii: "a"), count: 70_000), 413, "body-too-large"),
        ]
    }

    /// An app or App Store environment not configured here is not refused at admission: it is parked (stored once
    /// Apple's signature verifies, dead-lettered by the chain-verifier to be replayed after configuring).
    @Test func anUnconfiguredAppOrEnvironmentIsParkedNotRefused() throws {
        let admission = NotificationAdmission(
            apps: [AppIdentity(bundleId: SignedFixtures.bundleId)], environments: [.sandbox])
        var unknownApp = SignedFixtures.notification()
        unknownApp.data?.bundleId = "com.not.configured"
        let signer = self.fixtures.signer
        let parked = try admission.admit(
            body: Array(buffer: IngestTestSupport.body(try signer.sign(unknownApp))), route: nil)
        #expect(parked.parked == "unknown-app" && parked.bundleId == "com.not.configured")
        let production = try admission.admit(
            body: Array(buffer: IngestTestSupport.body(try self.fixtures.signedNotification(environment: .production))),
            route: nil)
        #expect(production.parked == "unknown-environment" && production.environment == .production)
        let valid = try admission.admit(
            body: Array(buffer: IngestTestSupport.body(try self.fixtures.signedNotification())), route: nil)
        #expect(valid.parked == nil)
    }

    @Test func aHeaderSeenBeforeDoesNotAdmitADifferentOne() throws {
        let admission = NotificationAdmission(
            apps: [AppIdentity(bundleId: SignedFixtures.bundleId)], environments: [.sandbox])
        let valid = Array(buffer: IngestTestSupport.body(try self.fixtures.signedNotification()))
        let refused = try self.refusedBodies().filter { ["bad-algorithm", "bad-certificate-chain"].contains($0.3) }
        #expect(refused.count == 2)
        for _ in 0..<2 {
            #expect(try admission.admit(body: valid, route: nil).environment == .sandbox)
            for (_, body, _, code) in refused {
                do throws(AdmissionRejection) {
                    _ = try admission.admit(body: Array(buffer: body), route: nil)
                    Issue.record("\(code) was admitted")
                } catch { #expect(error.code == code) }
            }
        }
        #expect(admission.headers.count == 3, "each header decoded once")
    }

    @Test func acceptedNotificationsAreOnTheRawTopicExactlyAsPostedAndRefusedOnesAreNot() async throws {
        try await withLocalBroker { bootstrap in
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            let settings = IngestTestSupport.settings(bootstrap: [bootstrap], roots: [self.fixtures.pki.root])
            try await kafka.createTopics([(settings.topics.raw, 3)])
            let registry = PrometheusCollectorRegistry()
            let app = try buildApplication(
                settings: settings, registry: registry, logger: IngestTestSupport.quietLogger)
            let valid = try self.fixtures.signedNotification()
            let validBody = IngestTestSupport.body(valid)
            let refused = try self.refusedBodies()
            try await app.test(.router) { client in
                for (uri, body, status, code) in refused {
                    try await client.execute(uri: uri, method: .post, body: body) { response in
                        #expect(response.status.code == status, "\(code)")
                        let json =
                            try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: String]
                        #expect(json?["error"] == code)
                        #expect(response.headers[.contentType] == "application/json")
                    }
                }
                for uri in ["/notifications", "/notifications/sandbox"] {
                    try await client.execute(
                        uri: uri, method: .post, headers: [.init("x-request-id")!: "req-\(uri.count)"], body: validBody
                    ) { response in
                        #expect(response.status == .ok)
                    }
                }
                try await client.execute(uri: "/metrics", method: .get) { response in
                    let text = String(buffer: response.body)
                    #expect(text.contains("ingest_requests_total{outcome=\"accepted\"} 2"))
                    #expect(text.contains("ingest_requests_total{outcome=\"not-json\"} 1"))
                }
                try await client.execute(uri: "/ready", method: .get) { #expect($0.status == .ok) }
                try await client.execute(uri: "/health", method: .get) { #expect($0.status == .ok) }
            }
            let records = try await kafka.readAll(settings.topics.raw, atLeast: 2, quiet: .seconds(2))
            #expect(records.count == 2, "only the two accepted bodies were produced")
            for record in records {
                #expect(record.value == Array(buffer: validBody))
                #expect(record.key == Array("2000000000000001".utf8), "keyed by originalTransactionId")
                #expect(record.header(PipelineHeaders.environment)?.text == "Sandbox")
                #expect(
                    record.header(PipelineHeaders.bundleId)?.text == SignedFixtures.bundleId,
                    "the app travels in a header too")
                #expect(record.header(PipelineHeaders.requestID)?.text?.hasPrefix("req-") == true)
                #expect(record.header(PipelineHeaders.receivedAt)?.text.flatMap { Int64($0) } != nil)
            }
        }
    }
}
