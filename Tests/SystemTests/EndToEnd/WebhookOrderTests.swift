@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Foundation
import Logging
import PipelineRecords
import PostgresNIO
import RdKafka
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

// MARK: - Order through a restart

/// A subject's order survives a dispatcher that comes back while its predecessor is still unread, against the real
/// binaries: a replica SIGKILLed after queueing a subject's event 2, whose event 1 sits unread on another topic,
/// is started again while the broker is frozen (so its consumer cannot join the group however long it takes). The
/// delivery of event 2, queued long before, is held: other deliveries go meanwhile, event 2 is not sent. Once the
/// broker thaws and event 1 is queued, event 1 is delivered, then event 2. (Before, the wait counted only from
/// event 2's queueing, and event 2 went first.)
@Suite(.serialized) struct WebhookOrderTests {
    static let logger = Logger(label: "webhook-order")

    @Test func aDeliveryWaitsForItsPredecessorThroughARestartWithTheBrokerFrozen() async throws {
        try await withFreezableLocalBroker { bootstrap, brokerPid in
            try await withLocalPostgres { databaseURL in
                try await SimHarness.with(customers: 1, seed: 11) { sim in
                    let logger = Self.logger
                    try await KafkaTestClient(bootstrapServers: [bootstrap]).createTopics(
                        PipelineTopics().all.map { ($0, 1) })
                    try await migrateDatabase(try DatabaseSettings(url: databaseURL), logger: logger)
                    let directory = try LocalComponents.temporaryDirectory("webhook-order")
                    let receiver = try Receiver(directory: directory, failShare: 0, slowShare: 0)
                    try await receiver.start(http: sim.http)
                    defer { if let process = receiver.running { kill(process.processIdentifier, SIGKILL) } }
                    var environment = try sim.pipelineEnvironment(
                        directory: directory, bootstrap: bootstrap, databaseURL: databaseURL)
                    environment.merge(WebhookEndToEndTests.dispatcherEnvironment) { _, new in new }
                    environment["WEBHOOK_ORDER_WAIT_MS"] = "1000"
                    let fleet = try ServiceFleet(
                        environment: environment, directory: directory, only: ["customer-api", "webhook-dispatcher"])
                    try await fleet.whileRunning(http: sim.http) {
                        try await Self.run(
                            sim, fleet: fleet, receiver: receiver, databaseURL: databaseURL, bootstrap: bootstrap,
                            brokerPid: brokerPid)
                    }
                }
            }
        }
    }

    static func run(
        _ sim: SimHarness, fleet: ServiceFleet, receiver: Receiver, databaseURL: String, bootstrap: String,
        brokerPid: Int32
    ) async throws {
        let logger = Self.logger
        let app = sim.app.bundleId
        let database = try DatabaseSettings(url: databaseURL)
        let key = try await DatabaseClient.with(database, logger: logger) {
            try await APIKeyStore(client: $0, logger: logger).create(bundleId: app, ratePerSecond: 1000, role: "admin")
                .token
        }
        let base = await fleet.customerAPIAdminURL
        try await waitUntilCustomerAPIKnows(key: key, baseURL: base, http: sim.http)
        let admin = Admin(base: base, app: app, key: key, http: sim.http)
        let ok = try await admin.register(url: receiver.url("/ok"), concurrency: 4)
        try receiver.setSecrets(["/ok": [ok.secret]])

        // The replica dies. What it had read: event s-2 (entitlements.changes) and t-1, both queued 30 s ago. What it
        // had not: s-1, published on entitlements.family.
        await fleet.kill("webhook-dispatcher")
        let topics = PipelineTopics()
        let events = [
            (topics.entitlementFamily, Self.event("s", 1)), (topics.entitlementChanges, Self.event("s", 2)),
            (topics.entitlementChanges, Self.event("t", 1)),
        ]
        try await KafkaTestClient(bootstrapServers: [bootstrap]).produce(
            events.map { topic, event in
                ProducerRecord(
                    topic: topic, key: Array("Production/\(app)/\(event.subject)".utf8), value: Array(event.json.utf8),
                    headers: [
                        KafkaHeader(name: "environment", text: "Production"), KafkaHeader(name: "bundle-id", text: app),
                    ])
            })
        try await DatabaseClient.with(database, logger: logger) { client in
            let backlog = WebhookBacklog(client: client, logger: logger)
            try await backlog.enqueue(
                events.dropFirst().map { _, event in
                    WebhookEvent(
                        environment: "Production", bundleId: app, eventId: event.id, eventType: "entitlement.changed",
                        subject: event.subject, sequence: event.sequence, payload: event.json, publishedAt: Date())
                })
            try await client.query(
                "UPDATE webhook_deliveries SET created_at = now() - interval '30 seconds'", logger: logger)
        }

        // It comes back while the broker is frozen: its consumer cannot join, so s-1 stays unread.
        #expect(try await freezeProcess(brokerPid), "the broker froze")
        try await fleet.start("webhook-dispatcher", http: sim.http)
        let otherWent = try await Polling.until(looks: 600, every: .milliseconds(100)) {
            try await receiver.accepted("/ok").contains { $0.body.contains(#""t-1""#) }
        }
        #expect(otherWent, "deliveries whose predecessor is queued (or that have none) go while the broker is frozen")
        // Three more seconds (three order waits) frozen: s-2 is never sent.
        let sentEarly = try await Polling.until(looks: 30, every: .milliseconds(100)) {
            try await receiver.requests().contains { $0.body.contains(#""s-2""#) }
        }
        #expect(!sentEarly, "s-2 waits for s-1, which the frozen broker holds, although queued 30 s ago")

        kill(brokerPid, SIGCONT)
        let both = try await Polling.until(looks: 1200, every: .milliseconds(100)) {
            let ids = try await receiver.accepted("/ok").map(\.body)
            return ids.contains { $0.contains(#""s-1""#) } && ids.contains { $0.contains(#""s-2""#) }
        }
        #expect(both, "once the broker is back, s-1 and s-2 are delivered")
        let requests = try await receiver.requests()
        let firstOfTwo = requests.firstIndex { $0.body.contains(#""s-2""#) }
        let acceptedOne = requests.firstIndex { $0.body.contains(#""s-1""#) && $0.answer == "200" }
        #expect(
            firstOfTwo != nil && acceptedOne != nil && acceptedOne! < firstOfTwo!,
            "s-1 was delivered before s-2 was sent: \(requests.map { "\($0.subject ?? "?")\($0.sequence ?? 0)" })")
        #expect(await fleet.kills == ["webhook-dispatcher"])
    }

    /// An event as event-publisher writes it: its id, subject and sequence, as JSON.
    static func event(_ subject: String, _ sequence: Int64) -> (
        id: String, subject: String, sequence: Int64, json: String
    ) {
        let id = "\(subject)-\(sequence)"
        return (
            id, subject, sequence,
            #"{"eventId":"\#(id)","eventType":"entitlement.changed","subject":"\#(subject)","sequence":\#(sequence)}"#
        )
    }
}
