import AppStoreModels
import AppStoreSigning
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import JWSVerification
import NotificationPipeline
import Prometheus
import RdKafka
import TestSupport
import Testing
import X509

@testable import Ingest

/// Ingest verifies the outer JWS before producing: each kind of forgery gets a 4xx JSON error and nothing
/// reaches the raw topic, the genuine notification (a test PKI's, and Apple's real one) is accepted; forged
/// chains neither evict the genuine chain from the cache nor get more than their budget of validations.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct IngestEdgeVerificationTests {
    let fixtures: SignedFixtures
    static let realApp = AppIdentity(bundleId: "com.loki-project.loki-messenger", appAppleId: 1_470_168_868)

    init() throws {
        self.fixtures = try SignedFixtures()
    }

    /// Apple's real Sandbox notification and Apple's root.
    static func real() throws -> (signedPayload: String, root: Certificate) {
        let signed = try Fixtures.text("real-sandbox/signedPayload_DID_RENEW").trimmingCharacters(
            in: .whitespacesAndNewlines)
        return (signed, try Certificate(derEncoded: try Fixtures.bytes("real-sandbox/AppleRootCA-G3.der")))
    }

    /// A JWS whose payload segment is replaced (the signature no longer covers it).
    static func tampered(_ jws: String) -> String {
        var parts = jws.split(separator: ".").map(String.init)
        let payload = Array(Data(base64Encoded: Self.padded(parts[1]))!)
        var text = String(decoding: payload, as: UTF8.self)
        text = text.replacingOccurrences(of: "\"signedDate\":", with: "\"signedDate\": ")
        parts[1] = AppStoreSigner.base64URL(Array(text.utf8))
        return parts.joined(separator: ".")
    }

    static func padded(_ base64URL: String) -> String {
        var base64 = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return base64
    }

    /// Each forgery, with the status and error code ingest must answer.
    func forgeries(real: String) throws -> [(String, String, Int, String)] {
        let payload = SignedFixtures.notification()
        let junk = AppStoreSigner(signingKey: P256.Signing.PrivateKey(), header: .init(x5c: ["AAAA", "QUJD", "ZGVm"]))
        let lookalike = try SignedFixtures()  // same names and Apple's marker OIDs, another root
        let overGenuineChain = AppStoreSigner(
            signingKey: P256.Signing.PrivateKey(), header: .init(x5c: self.fixtures.pki.x5c))
        let impostor = try TestPKI()
        let selfSigned = AppStoreSigner(
            signingKey: impostor.rootKey,
            header: .init(x5c: [
                TestPKI.base64DER(impostor.root), TestPKI.base64DER(impostor.intermediate),
                TestPKI.base64DER(impostor.root),
            ]))
        var otherApp = payload
        otherApp.data?.bundleId = "com.example.other"
        return [
            ("junk certificates", try junk.sign(payload), 403, "verification-failed"),
            (
                "an untrusted chain with Apple's names and OIDs", try lookalike.signedNotification(), 403,
                "verification-failed"
            ),
            (
                "the genuine chain over a forged signature", try overGenuineChain.sign(payload), 403,
                "verification-failed"
            ),
            ("a self-signed leaf", try selfSigned.sign(payload), 403, "verification-failed"),
            (
                "a tampered test notification", Self.tampered(try self.fixtures.signedNotification()), 403,
                "verification-failed"
            ),
            ("a tampered real Apple notification", Self.tampered(real), 403, "verification-failed"),
            // Another app's notification under a chain of the forger's own: refused like any forgery (only Apple's
            // is parked).
            (
                "another app's, forged", try AppStoreSigner(pki: try TestPKI()).sign(otherApp), 403,
                "verification-failed"
            ),
        ]
    }

    @Test func everyForgeryIsRefusedBeforeKafkaAndTheGenuineOnesAreAccepted() async throws {
        try await withLocalBroker { bootstrap in
            let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
            let (real, appleRoot) = try Self.real()
            var settings = IngestTestSupport.settings(
                bootstrap: [bootstrap], roots: [self.fixtures.pki.root, appleRoot])
            settings.accepted.apps.append(Self.realApp)
            try await kafka.createTopics([(settings.topics.raw, 1)])
            let app = try buildApplication(
                settings: settings, registry: PrometheusCollectorRegistry(), logger: IngestTestSupport.quietLogger)
            try await app.test(.router) { client in
                for (name, jws, status, code) in try self.forgeries(real: real) {
                    try await client.execute(uri: "/notifications", method: .post, body: IngestTestSupport.body(jws)) {
                        response in
                        let json =
                            try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: String]
                        #expect(
                            response.status.code == status && json?["error"] == code,
                            "\(name): \(response.status) \(json ?? [:])")
                    }
                }
                // Apple's notifications: two of configured apps, one of an app not configured (stored, parked later).
                var otherApp = SignedFixtures.notification()
                otherApp.data?.bundleId = "com.example.other"
                for genuine in [try self.fixtures.signedNotification(), real, try self.fixtures.signer.sign(otherApp)] {
                    try await client.execute(
                        uri: "/notifications", method: .post, body: IngestTestSupport.body(genuine)
                    ) { response in
                        #expect(response.status == .ok, "\(String(buffer: response.body))")
                    }
                }
            }
            let records = try await kafka.readAll(settings.topics.raw, atLeast: 3, quiet: .seconds(2))
            #expect(records.count == 3, "only the three genuine notifications reached the raw topic")
        }
    }

    @Test func forgedChainsNeitherEvictTheGenuineChainNorExceedTheirBudget() async throws {
        let verifier = try self.fixtures.verifier()
        let genuine = try self.fixtures.signedNotification()
        let admission = NotificationAdmission(
            apps: [AppIdentity(bundleId: SignedFixtures.bundleId, appAppleId: SignedFixtures.appAppleId)],
            environments: [.sandbox])
        func admitted(_ jws: String) throws -> AdmittedNotification {
            try admission.admit(body: Array(buffer: IngestTestSupport.body(jws)), route: nil)
        }

        // A budget larger than the forgeries: every forged chain is validated, fails, and is not cached.
        let generous = EdgeVerification(verifiers: [.sandbox: verifier], newChainsPerSecond: 1000)
        try await generous.verify(try admitted(genuine), source: "127.0.0.1")
        let genuineNotification = try admitted(genuine).notification
        #expect(verifier.cachedChainCount == 1 && verifier.knowsChain(of: genuineNotification))
        for _ in 0..<40 {
            let forged = try SignedFixtures().signedNotification()
            await #expect(throws: AdmissionRejection.self) {
                try await generous.verify(try admitted(forged), source: "127.0.0.1")
            }
        }
        #expect(
            verifier.cachedChainCount == 1 && verifier.knowsChain(of: genuineNotification),
            "the genuine chain is still the only one cached")

        // A budget of 2 new chains a second: a burst of forgeries gets 503 after two, the genuine chain never waits.
        // The budget's clock stands still, so the burst is the budget's whatever the machine's speed (each forgery
        // is a new PKI, which took over half a second under a loaded CI run and refilled the budget meanwhile).
        let instant = ContinuousClock.now + .seconds(1)
        let tight = EdgeVerification(verifiers: [.sandbox: verifier], newChainsPerSecond: 2, clock: { instant })
        var busy = 0, failed = 0
        for _ in 0..<8 {
            do {
                try await tight.verify(try admitted(try SignedFixtures().signedNotification()), source: "127.0.0.1")
            } catch let rejection as AdmissionRejection {
                if rejection.code == "verification-busy" {
                    busy += 1
                } else if rejection.code == "verification-failed" {
                    failed += 1
                }
            }
            try await tight.verify(try admitted(genuine), source: "127.0.0.1")
        }
        #expect(
            failed == 2 && busy == 6,
            "exactly the budget's chains validated: \(failed) validated and refused, \(busy) busy")
    }
}
