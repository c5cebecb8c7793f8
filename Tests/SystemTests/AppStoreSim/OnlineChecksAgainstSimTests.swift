import AppStoreModels
import AppStoreSigning
@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Foundation
import JWSVerification
import NIOCore
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// The verifiers' online checks over HTTP against the OCSP responder the sim serves for its PKI, built from the
/// settings a service reads (`APPSTORE_ONLINE_CHECKS`): good answers verify, a revoked leaf or intermediate is a
/// permanent refusal, an unavailable or busy responder a retryable one; bad settings stop the service.
@Suite(.tags(.integration), .serialized, .timeLimit(.minutes(2))) struct OnlineChecksAgainstSimTests {
    /// The verifiers a service builds with online checks on, trusting the sim's root (fresh, so no cached chain).
    static func verifiers(_ sim: SimHarness) throws -> [AppStoreModels.Environment: SignedDataVerifier] {
        var trust = try TrustSettings(EnvironmentSettings(["APPSTORE_ONLINE_CHECKS": "true"]))
        trust.trustedRoots = [sim.pki.root]
        return try trust.makeVerifiers(for: sim.accepted)
    }

    /// Switches the sim's responder.
    static func setResponder(_ sim: SimHarness, _ json: String) async throws {
        var request = HTTPClientRequest(url: sim.baseURL.absoluteString + "/sim/ocsp/state")
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: json))
        // The sim answers at once; a full run's other suites may keep this process from reading the answer for
        // seconds (a 5-s deadline failed one), so the deadline only guards against a hang.
        let response = try await sim.http.execute(request, timeout: .minutes(2))
        #expect(response.status == .ok, "\(json)")
    }

    /// Verifies the sim's first signed notification with fresh verifiers.
    static func verify(_ sim: SimHarness) async throws {
        _ = try await Self.verifiers(sim)[.production]!.verifyNotification(sim.simulator.signed[0].signedPayload)
    }

    @Test func goodRevokedAndUnanswerableResponders() async throws {
        try await SimHarness.with(customers: 5, seed: 7) { sim in
            try await Self.verify(sim)
            #expect(sim.simulator.ocsp.asked.withLock { $0 } >= 2, "leaf and intermediate were asked about over HTTP")

            for revoked in ["leaf", "intermediate"] {
                try await Self.setResponder(sim, #"{"mode": "answering", "revoked": ["\#(revoked)"]}"#)
                let error = try await #require(throws: VerificationError.self) { try await Self.verify(sim) }
                #expect(error.kind == .chain && error.detail.contains("revoked"), "\(revoked): \(error)")
            }
            // A redirect is no answer: following it would verify (the sim's other address answers "good").
            for mode in ["unavailable", "tryLater", "redirect"] {
                try await Self.setResponder(sim, #"{"mode": "\#(mode)"}"#)
                let error = try await #require(throws: VerificationError.self) { try await Self.verify(sim) }
                #expect(error.isRetryable, "\(mode): \(error)")
            }
            try await Self.setResponder(sim, #"{"mode": "answering"}"#)
            try await Self.verify(sim)
        }
    }

    @Test(arguments: [
        ["APPSTORE_ONLINE_CHECKS": "yes"], ["APPSTORE_OCSP_TIMEOUT_MS": "10000"], ["APPSTORE_OCSP_TIMEOUT_MS": "50"],
        ["APPSTORE_OCSP_CACHE_SECONDS": "0"], ["APPSTORE_OCSP_CACHE_SECONDS": "soon"],
    ])
    func aBadSettingStopsTheService(_ values: [String: String]) {
        #expect(throws: SettingsError.self) { try TrustSettings(EnvironmentSettings(values)) }
    }
}

/// The `chain-verifier` binary with online checks on, against the sim's responder: while the responder is
/// unavailable nothing is verified and nothing is dead-lettered (the batch is tried again); once it answers, every
/// notification is verified; after the leaf is revoked (and the cache's one second has passed) new notifications
/// are dead-lettered as `chain`.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(4))) struct ChainVerifierOnlineChecksTests
{
    @Test func anUnavailableResponderDelaysAndARevokedLeafRefuses() async throws {
        try await withLocalBroker { bootstrap in
            try await SimHarness.with(customers: 30, seed: 11) { sim in
                let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
                let topics = PipelineTopics()
                try await kafka.createTopics([(topics.raw, 2), (topics.verified, 2), (topics.rejected, 2)])
                let directory = try LocalComponents.temporaryDirectory("online-checks")
                defer { try? FileManager.default.removeItem(at: directory) }
                let root = directory.appendingPathComponent("root.der")
                try Data(TestPKI.der(sim.pki.root)).write(to: root)
                let environment = [
                    "APPSTORE_APPS": "\(sim.app.bundleId):\(sim.app.appAppleId!)",
                    "APPSTORE_ENVIRONMENTS": "Production",
                    "APPSTORE_ROOT_CERTIFICATES": root.path, "APPSTORE_ONLINE_CHECKS": "true",
                    "APPSTORE_OCSP_CACHE_SECONDS": "1", "KAFKA_BOOTSTRAP_SERVERS": bootstrap,
                    "KAFKA_SESSION_TIMEOUT_MS": "6000", "HTTP_HOST": "127.0.0.1", "HTTP_PORT": "0",
                    "LOG_LEVEL": "warning", "RECORD_SIGNING_KEYS": TestRecordSigning.variable(.chainVerifier),
                ]
                /// Raw records of the sim's signed notifications, as ingest writes them.
                func raw(_ items: ArraySlice<SimDelivery.Item>) -> [ProducerRecord] {
                    items.map {
                        ProducerRecord(
                            topic: topics.raw, key: Array($0.uuid.utf8),
                            value: Array("{\"signedPayload\":\"\($0.signedPayload)\"}".utf8),
                            headers: [KafkaHeader(name: PipelineHeaders.environment, text: "Production")])
                    }
                }
                let signed = sim.simulator.signed.filter { !$0.uuid.isEmpty }
                try #require(signed.count >= 25)

                try await OnlineChecksAgainstSimTests.setResponder(sim, #"{"mode": "unavailable"}"#)
                let verifier = try ServiceProcess.start(
                    "chain-verifier", environment: environment, log: directory.appendingPathComponent("cv.log"))
                try await ServiceProcess.whileRunning(verifier) {
                    try await kafka.produce(raw(signed.prefix(20)))
                    // The verifier keeps asking (each try is a 503) and keeps the batch.
                    for _ in 0..<600 where sim.simulator.ocsp.asked.withLock({ $0 }) < 6 {
                        try await Task.sleep(for: .milliseconds(100))
                    }
                    #expect(sim.simulator.ocsp.asked.withLock { $0 } >= 6, "the verifier asked again and again")
                    #expect(
                        try await kafka.readAll(topics.verified, atLeast: 0, quiet: .zero, timeout: .seconds(5)).isEmpty
                    )
                    #expect(
                        try await kafka.readAll(topics.rejected, atLeast: 0, quiet: .zero, timeout: .seconds(5))
                            .isEmpty,
                        "a responder's trouble dead-letters nothing")

                    try await OnlineChecksAgainstSimTests.setResponder(sim, #"{"mode": "answering"}"#)
                    let verified = try await kafka.readAll(
                        topics.verified, atLeast: 20, quiet: .seconds(1), timeout: .seconds(120))
                    #expect(Set(verified.map { String(decoding: $0.key ?? [], as: UTF8.self) }).count >= 1)
                    #expect(verified.count >= 20, "every notification verified once the responder answers")

                    try await OnlineChecksAgainstSimTests.setResponder(
                        sim, #"{"mode": "answering", "revoked": ["leaf"]}"#)
                    try await Task.sleep(for: .milliseconds(1_500))  // past the cleared chain's one-second trust
                    try await kafka.produce(raw(signed[20..<25]))
                    let rejected = try await kafka.readAll(
                        topics.rejected, atLeast: 5, quiet: .seconds(1), timeout: .seconds(120))
                    let reasons = try rejected.map {
                        try JSONDecoder().decode(RejectedNotificationRecord.self, from: Data($0.value ?? [])).reason
                    }
                    #expect(reasons == Array(repeating: "chain", count: 5), "\(reasons)")
                }
            }
        }
    }
}

/// The `ingest` binary with online checks on, against the sim's responder: a notification whose responder gives no
/// verdict (unavailable, or a redirect, which is not followed) is answered 503, which Apple retries, and nothing is
/// stored; once the responder answers, the same notification is 200 and on the raw topic once.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct IngestOnlineChecksTests {
    @Test func noVerdictIsA503AndAVerdictIsA200() async throws {
        try await withLocalBroker { bootstrap in
            try await SimHarness.with(customers: 3, seed: 5) { sim in
                let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
                let topics = PipelineTopics()
                try await kafka.createTopics([(topics.raw, 1)])
                let directory = try LocalComponents.temporaryDirectory("ingest-online-checks")
                defer { try? FileManager.default.removeItem(at: directory) }
                let fleet = try ServiceFleet(
                    environment: try sim.environment(directory: directory, bootstrap: bootstrap).merging([
                        "APPSTORE_ENVIRONMENTS": "Production,Sandbox", "APPSTORE_ONLINE_CHECKS": "true",
                        "APPSTORE_OCSP_CACHE_SECONDS": "1", "LOG_LEVEL": "warning",
                    ]) { _, new in new }, directory: directory, only: ["ingest"])
                try await fleet.whileRunning(http: sim.http) {
                    let notification = try #require(sim.simulator.signed.first { !$0.uuid.isEmpty })
                    let url = await fleet.ingestURL
                    for mode in ["unavailable", "redirect"] {
                        try await OnlineChecksAgainstSimTests.setResponder(sim, #"{"mode": "\#(mode)"}"#)
                        let (status, body) = await Simulator.postJSON(
                            sim.http, url, ["signedPayload": notification.signedPayload], key: nil)
                        #expect(status == 503, "\(mode): \(body)")
                        #expect(body["error"] as? String == "verification-unavailable", "\(mode): \(body)")
                    }
                    try await OnlineChecksAgainstSimTests.setResponder(sim, #"{"mode": "answering"}"#)
                    let (status, body) = await Simulator.postJSON(
                        sim.http, url, ["signedPayload": notification.signedPayload], key: nil)
                    #expect(status == 200, "\(body)")
                    let stored = try await kafka.readAll(
                        topics.raw, atLeast: 1, quiet: .seconds(1), timeout: .seconds(60))
                    #expect(stored.count == 1, "only the answer with a verdict stored it")
                }
            }
        }
    }
}
