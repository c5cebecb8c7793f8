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

/// Webhooks for a team without Kafka, against the real binaries: the whole pipeline plus webhook-dispatcher, and a
/// receiver (Tests/Contract/webhook_receiver.py) that verifies every delivery with the `standardwebhooks` package,
/// answers 500 to 30 % of them, too late to 5 %, and is down for a stretch; the dispatcher is SIGKILLed mid-stream
/// and the endpoint's secret rotated. Every event of the app reaches the endpoint at least once, signed, each subject's
/// in `sequence` order with no gap; an endpoint answering 410 is disabled after one request and its app's other
/// endpoint told so; the delivery log shows the attempts, and a replay sends a delivery again.
@Suite(.heavy, .serialized) struct WebhookEndToEndTests {
    static let logger = Logger(label: "webhooks-end-to-end")

    @Test func everyEventIsDeliveredSignedAndInOrderThroughFailuresAnOutageAndAKill() async throws {
        try await withLocalBroker { bootstrap in
            try await withLocalPostgres { databaseURL in
                try await SimHarness.with(
                    customers: 250, seed: 29,
                    configure: {
                        $0.retryDelays = [.seconds(2), .seconds(4), .seconds(8)]
                        $0.environments = [.production, .sandbox]
                    }
                ) { sim in
                    try await KafkaTestClient(bootstrapServers: [bootstrap]).createTopics(
                        PipelineTopics().all.map { ($0, 4) })
                    try await migrateDatabase(try DatabaseSettings(url: databaseURL), logger: Self.logger)
                    let directory = try LocalComponents.temporaryDirectory("webhooks")
                    let receiver = try Receiver(directory: directory)
                    try await receiver.start(http: sim.http)
                    var environment = try sim.pipelineEnvironment(
                        directory: directory, bootstrap: bootstrap, databaseURL: databaseURL)
                    environment.merge(Self.dispatcherEnvironment) { _, new in new }
                    let fleet = try ServiceFleet(
                        environment: environment, directory: directory,
                        only: ServiceFleet.pipeline + ["webhook-dispatcher"])
                    defer { if let process = receiver.running { kill(process.processIdentifier, SIGKILL) } }
                    try await fleet.whileRunning(http: sim.http) {
                        try await Self.run(
                            sim, fleet: fleet, receiver: receiver, databaseURL: databaseURL,
                            bootstrap: bootstrap)
                    }
                }
            }
        }
    }

    /// Quick retries and short waits, so failures are retried within the test; private addresses allowed (loopback).
    static let dispatcherEnvironment = [
        "WEBHOOK_ALLOW_PRIVATE_ADDRESSES": "true", "WEBHOOK_REQUEST_TIMEOUT_MS": "1000", "WEBHOOK_LEASE_MS": "4000",
        "WEBHOOK_RETRY_BASE_MS": "200", "WEBHOOK_RETRY_MAX_MS": "2000", "WEBHOOK_ENDPOINT_REFRESH_MS": "500",
        "WEBHOOK_POLL_MS": "200",
    ]

    static func run(
        _ sim: SimHarness, fleet: ServiceFleet, receiver: Receiver, databaseURL: String, bootstrap: String
    ) async throws {
        let app = sim.app.bundleId
        let key = try await DatabaseClient.with(try DatabaseSettings(url: databaseURL), logger: Self.logger) {
            try await APIKeyStore(client: $0, logger: Self.logger).create(
                bundleId: app, ratePerSecond: 1000, role: "admin"
            ).token
        }
        let admin = Admin(base: await fleet.customerAPIAdminURL, app: app, key: key, http: sim.http)
        let started = Date()
        try await waitUntilCustomerAPIKnows(key: key, baseURL: await fleet.customerAPIAdminURL, http: sim.http)

        // Two endpoints for Production: every event type, and one that answers 410.
        let ok = try await admin.register(url: receiver.url("/ok"), concurrency: 8)
        let gone = try await admin.register(url: receiver.url("/gone"), concurrency: 1)
        try receiver.setSecrets(["/ok": [ok.secret], "/gone": [gone.secret]])
        let refused = try await admin.post("webhooks", ["url": "ftp://example.com/hook"])
        #expect(refused.status == 400 && refused.body.contains("bad-url"), "\(refused.body)")

        // The scenario flows; the dispatcher is SIGKILLed once 100 deliveries were accepted (and started again).
        let ingest = await fleet.ingestURL
        await sim.simulator.store.setNotificationURL(ingest)
        let delivery = Task { await sim.simulator.deliver(sim.simulator.deliveryPlan(), http: sim.http, to: ingest) }
        #expect(try await receiver.waitUntil(accepted: 100), "deliveries flow")
        await fleet.kill("webhook-dispatcher")
        let acceptedAtKill = try await receiver.accepted("/ok").count
        try await fleet.start("webhook-dispatcher", http: sim.http)

        // A rotation as a receiver does it: accept both secrets, wait until deliveries carry both signatures, then
        // drop the old one. Deliveries the dispatcher sent before it read the rotation (at most the endpoint's
        // concurrency, however late they arrive) carry the old signature alone: those are refused and sent again.
        let rotated = try await admin.rotate(ok.endpointId)
        try receiver.setSecrets(["/ok": [ok.secret, rotated], "/gone": [gone.secret]])
        let bothSigned = try await Polling.until(looks: 400, every: .milliseconds(100)) {
            try await receiver.requests().contains { $0.path == "/ok" && $0.signatures == 2 }
        }
        #expect(bothSigned, "after a rotation deliveries are signed with the old and the new secret")
        try receiver.setSecrets(["/ok": [rotated], "/gone": [gone.secret]], retired: ["/ok": [ok.secret]])

        // The receiver goes down; Apple's TEST notification makes an event meanwhile; the dispatcher's attempts find
        // the port closed; the receiver comes back.
        _ = await delivery.value
        await receiver.stop()
        _ = try await sim.client().requestTestNotification()
        let downSince = Date()
        let failedWhileDown = try await Polling.until(looks: 600, every: .milliseconds(100)) {
            try await Self.attemptsWithoutAnswer(since: downSince, databaseURL: databaseURL) > 0
        }
        #expect(failedWhileDown, "the dispatcher tried the endpoint while it was down")
        try await receiver.start(http: sim.http)
        await sim.simulator.retryUndelivered(http: sim.http, to: ingest)

        // What the topics hold for the app in Production.
        let expected = try await Self.publishedEvents(app: app, bootstrap: bootstrap)
        #expect(expected.count > 100, "the scenario published events for the app: \(expected.count)")
        let arrived = try await Polling.until(looks: 1200, every: .milliseconds(250)) {
            Set(try await receiver.accepted("/ok").map(\.id)).isSuperset(of: expected.keys)
        }
        let requests = try await receiver.requests()
        let accepted = try await receiver.accepted("/ok")
        let acceptedIds = Set(accepted.map(\.id))
        let missing = expected.keys.filter { !acceptedIds.contains($0) }.count
        #expect(arrived, "every event delivered at least once: \(missing) of \(expected.count) missing")
        #expect(accepted.count > acceptedAtKill, "deliveries went on after the dispatcher was started again")
        #expect(accepted.contains { $0.eventType == "test.received" }, "the event made while the receiver was down")
        let unverified = requests.filter { !$0.verified && !$0.signedWithRetiredSecret }
            .map { "\($0.path) \($0.id): \($0.signatures) signatures" }
        #expect(unverified.isEmpty, "every request verified with standardwebhooks; not: \(unverified)")
        // Signed with the old secret alone, and refused: only what was in flight when the dispatcher read the rotation
        // (its concurrency, 8), or in the killed dispatcher's last moments (8 more).
        let sentBeforeTheRotation = requests.filter(\.signedWithRetiredSecret)
        #expect(
            sentBeforeTheRotation.count <= 16 && sentBeforeTheRotation.allSatisfy { $0.signatures == 1 },
            "only deliveries sent before the rotation was read: \(sentBeforeTheRotation.map(\.id))")
        #expect(requests.contains { $0.answer == "500" } && requests.contains { $0.answer == "slow" })

        // Each subject's events, in the order first accepted: sequence 1, 2, 3… with no gap and none out of order.
        var seen = Set<String>()
        var last: [String: Int] = [:]
        var wrong: [String] = []
        for delivery in accepted where !seen.contains(delivery.id) && delivery.eventType != "webhook.endpoint-disabled"
        {
            seen.insert(delivery.id)
            guard let subject = delivery.subject, let number = delivery.sequence else {
                wrong.append("\(delivery.id): no subject or sequence")
                continue
            }
            if number != last[subject, default: 0] + 1 {
                wrong.append("\(subject): \(last[subject, default: 0]) → \(number)")
            }
            last[subject] = number
        }
        #expect(wrong.isEmpty, "in sequence per subject, no gap: \(wrong.prefix(5))")

        // The 410 endpoint: one request, then disabled, and the other endpoint told.
        #expect(requests.filter { $0.path == "/gone" }.count == 1, "nothing is sent to a disabled endpoint")
        let goneNow = try await admin.endpoint(gone.endpointId)
        #expect((goneNow["disabledReason"] as? String)?.contains("410") == true, "disabled for its 410: \(goneNow)")
        #expect((goneNow["pending"] as? Int ?? 0) > 0, "its backlog is kept")
        #expect(
            accepted.contains { $0.eventType == "webhook.endpoint-disabled" && $0.body.contains(gone.endpointId) },
            "the app's other endpoint got webhook.endpoint-disabled")

        // The delivery log, and a replay of one delivery.
        let log = try await admin.deliveries(ok.endpointId, query: "state=delivered&limit=50")
        let withRetries = log.first { ($0["attempts"] as? [[String: Any]] ?? []).count > 1 }
        let attempts = withRetries?["attempts"] as? [[String: Any]] ?? []
        #expect(attempts.contains { $0["status"] as? Int == 500 || $0["error"] != nil }, "failed attempts are logged")
        #expect(attempts.last?["status"] as? Int == 200, "and the one that delivered")
        let replayed = try #require(log.first)
        let replayedEvent = try #require(replayed["eventId"] as? String)
        let before = accepted.filter { $0.id == replayedEvent }.count
        let answer = try await admin.post(
            "webhooks/\(ok.endpointId)/replay", ["deliveryId": replayed["id"] as? Int ?? -1])
        #expect(answer.status == 200 && answer.body.contains(#""replayed":1"#), "\(answer.body)")
        let again = try await Polling.until(looks: 400, every: .milliseconds(250)) {
            try await receiver.accepted("/ok").filter { $0.id == replayedEvent }.count > before
        }
        #expect(again, "the replayed delivery came again with the same webhook-id")

        // The same through iapctl, as an operator: the list, the log, and a replay of a time range (everything so far).
        let operatorEnvironment = [
            "CUSTOMER_API_ADMIN_URL": await fleet.customerAPIAdminURL, "CUSTOMER_API_ADMIN_KEY": key,
        ]
        let (listStatus, listed) = try await IAPCtlProcess.run(
            ["webhooks", "list", "--app", app], environment: operatorEnvironment)
        #expect(listStatus == 0 && listed.contains(ok.endpointId) && listed.contains("410"), "\(listed)")
        let (logStatus, logged) = try await IAPCtlProcess.run(
            ["webhooks", "deliveries", ok.endpointId, "--app", app, "--state", "delivered", "--limit", "3"],
            environment: operatorEnvironment)
        #expect(logStatus == 0 && logged.contains(#""attempts""#), "\(logged)")
        let (usageStatus, _) = try await IAPCtlProcess.run(
            [
                "webhooks", "replay", ok.endpointId, "--app", app, "--delivery", "1", "--from", "2026-01-01T00:00:00Z",
                "--to", "2026-01-02T00:00:00Z",
            ],
            environment: operatorEnvironment)
        #expect(usageStatus == 2, "one delivery or a range, not both")
        let acceptedBefore = try await receiver.accepted("/ok").count
        let (rangeStatus, ranged) = try await IAPCtlProcess.run(
            [
                "webhooks", "replay", ok.endpointId, "--app", app, "--from", started.ISO8601Format(), "--to",
                Date().addingTimeInterval(60).ISO8601Format(),
            ], environment: operatorEnvironment)
        let replayedCount =
            (try? JSONSerialization.jsonObject(with: Data(ranged.utf8)) as? [String: Any])?["replayed"] as? Int ?? 0
        #expect(rangeStatus == 0 && replayedCount >= expected.count, "\(ranged)")
        let rangeArrived = try await Polling.until(looks: 1200, every: .milliseconds(250)) {
            try await receiver.accepted("/ok").count >= acceptedBefore + replayedCount
        }
        #expect(rangeArrived, "every delivery of the range came again")

        // The console, in a real browser: the endpoints, one's delivery log, and a replay with the page's button.
        let (status, output) = try await LocalComponents.python(
            "Tests/BrowserChecks/console_webhooks.py",
            [await fleet.customerAPIAdminURL + "/console#app=\(app)&key=\(key)&webhooks=1", ok.endpointId])
        try #require(status == 0, "\(output)")
        let console = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let rows = console["endpoints"] as? [String] ?? []
        #expect(
            rows.count == 2 && rows.contains { $0.contains(gone.endpointId) && $0.contains("410") }
                && rows.contains { $0.contains(ok.endpointId) && $0.contains("enabled") }, "\(rows)")
        #expect(
            (console["deliveries"] as? Int ?? 0) > 0 && (console["first"] as? String ?? "").contains("delivered"),
            "the delivery log: \(console)")
        #expect(
            console["replayed"] is String && (console["violations"] as? [String])?.isEmpty == true
                && console["images"] as? Int == 0, "a replay from the console, under its CSP: \(console)")
        #expect(await fleet.kills == ["webhook-dispatcher"])
    }

    /// How many attempts since `time` got no answer (refused, timed out): the delivery log in PostgreSQL.
    static func attemptsWithoutAnswer(since time: Date, databaseURL: String) async throws -> Int {
        try await DatabaseClient.with(try DatabaseSettings(url: databaseURL), logger: Self.logger) { client in
            var count = 0
            for try await n in try await client.query(
                "SELECT count(*) FROM webhook_attempts WHERE status IS NULL AND attempted_at >= \(time)",
                logger: Self.logger
            ).decode(Int64.self) { count = Int(n) }
            return count
        }
    }

    /// The app's Production events on the three topics, by id.
    static func publishedEvents(app: String, bootstrap: String) async throws -> [String: [String: Any]] {
        var events: [String: [String: Any]] = [:]
        let topics = PipelineTopics()
        for topic in [topics.entitlementChanges, topics.entitlementFamily, topics.entitlementRevocations] {
            for record in try await KafkaTestClient(bootstrapServers: [bootstrap]).readAll(
                topic, atLeast: 1, quiet: .seconds(2), timeout: .seconds(60))
            {
                guard let value = record.value,
                    let event = try JSONSerialization.jsonObject(with: Data(value)) as? [String: Any],
                    event["bundleId"] as? String == app, event["environment"] as? String == "Production",
                    let id = event["eventId"] as? String
                else { continue }
                events[id] = event
            }
        }
        return events
    }
}
