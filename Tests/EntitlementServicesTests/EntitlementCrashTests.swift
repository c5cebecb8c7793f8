import AppStoreModels
import Entitlements
import Foundation
import JWSVerification
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import RdKafka
import Storage
import TestSupport
import Testing

/// SIGKILL of the real `entitlement-updater` and `event-publisher` at random points during thousands of
/// notifications: after restarts the database equals an uninterrupted run's, and every event of that run
/// was published (repeats allowed, with the same eventId).
@Suite(.heavy, .tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(10)))
struct EntitlementCrashTests {
    let logger: Logger = {
        var logger = Logger(label: "entitlement-crash")
        logger.logLevel = .error
        return logger
    }()

    /// Life cycles of many subscriptions (see ``VerifiedRecords/lifeCycle``).
    static func records(subscriptions: Int) -> [VerifiedNotificationRecord] {
        (0..<subscriptions).flatMap(VerifiedRecords.lifeCycle)
    }

    /// Entitlement rows of a database, comparable.
    func entitlements(_ client: PostgresClient) async throws -> [String] {
        var rows: [String] = []
        let query = try await client.query(
            """
            SELECT customer, product_id, active, source_transaction_id, valid_until, revoked_at, ownership_type FROM entitlements ORDER BY 1, 2
            """, logger: logger)
        for try await row in query.decode((String, String, Bool, String, Int64?, Int64?, String).self) {
            rows.append("\(row)")
        }
        return rows
    }

    func scalar(_ client: PostgresClient, _ sql: String) async throws -> Int {
        var value = 0
        for try await number in try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(Int.self) {
            value = number
        }
        return value
    }

    @Test func killedAtRandomPointsTheResultEqualsAnUninterruptedRun() async throws {
        for name in ["entitlement-updater", "event-publisher"] {
            #expect(
                FileManager.default.isExecutableFile(atPath: ServiceProcess.binaries.appendingPathComponent(name).path),
                "build \(name) first")
        }
        let logger = self.logger
        try await withLocalBroker { bootstrap in
            try await withLocalPostgres { url in
                let records = Self.records(subscriptions: 250)
                let topics = PipelineTopics()
                let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
                try await kafka.createTopics(topics.all.map { ($0, 4) })
                try await kafka.produce(
                    try records.map {
                        TestRecordSigning.signer(.chainVerifier).sign(
                            ProducerRecord(topic: topics.verified, key: Array($0.subject.utf8), value: try $0.encoded())
                        )
                    })

                // The reference: the same records applied once, in order, with no interruption.
                let server = try DatabaseSettings(url: url)
                try await DatabaseClient.with(server, logger: logger) {
                    try await $0.query("CREATE DATABASE reference", logger: logger)
                }
                var referenceSettings = server
                referenceSettings.database = "reference"
                let (expectedRows, expectedEvents) = try await DatabaseClient.with(referenceSettings, logger: logger) {
                    client in
                    try await MigrationRunner().migrate(client: client, logger: logger)
                    let repository = EntitlementRepository(client: client, logger: logger)
                    for record in records { _ = try await repository.apply(record, receivedAt: nil) }
                    var ids: Set<String> = []
                    for try await id in try await client.query("SELECT event_id FROM outbox", logger: logger).decode(
                        String.self)
                    { ids.insert(id) }
                    return (try await self.entitlements(client), ids)
                }

                // The interrupted run: the real services, SIGKILLed and restarted at random points.
                let directory = try LocalComponents.temporaryDirectory("entitlement-crash")
                defer { try? FileManager.default.removeItem(at: directory) }
                let environment = [
                    "DATABASE_URL": url, "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "KAFKA_SESSION_TIMEOUT_MS": "6000",
                    "HTTP_HOST": "127.0.0.1",
                    "HTTP_PORT": "0", "LOG_LEVEL": "error", "UPDATER_BATCH": "50", "PUBLISHER_BATCH": "40",
                    "RECORD_VERIFYING_KEYS": TestRecordSigning.verifyingVariable,
                    // The records are built, not signed by Apple (AppleSignatureRecheckTests covers the check).
                    "UPDATER_APPLE_SIGNATURE_CHECK": "off",
                ]
                try await migrateDatabase(server, logger: logger)
                var running = [
                    "entitlement-updater": try ServiceProcess.start(
                        "entitlement-updater", environment: environment,
                        log: directory.appendingPathComponent("updater.log")),
                    "event-publisher": try ServiceProcess.start(
                        "event-publisher", environment: environment,
                        log: directory.appendingPathComponent("publisher.log")),
                ]
                do {
                    var generator = SystemRandomNumberGenerator()
                    var kills = 0
                    for round in 0..<6 {
                        try await Task.sleep(for: .milliseconds(Int.random(in: 1500...3500, using: &generator)))
                        let name = round % 2 == 0 ? "entitlement-updater" : "event-publisher"
                        if let process = running[name], process.isRunning {
                            kill(process.processIdentifier, SIGKILL)
                            _ = try await ServiceProcess.exitStatus(of: process)
                            kills += 1
                        }
                        running[name] = try ServiceProcess.start(
                            name, environment: environment, log: directory.appendingPathComponent("\(name).log"))
                    }
                    #expect(kills >= 5)

                    // Let them finish: every notification logged, the outbox empty.
                    let done = try await DatabaseClient.with(server, logger: logger) { client in
                        for _ in 0..<1500 {  // up to 5 minutes: the whole suite may be running beside it
                            let logged = try await self.scalar(client, "SELECT count(*) FROM notification_log")
                            let backlog = try await self.scalar(
                                client, "SELECT count(*) FROM outbox_pending")
                            let outbox = try await self.scalar(client, "SELECT count(*) FROM outbox")
                            if logged == records.count && backlog == 0 && outbox > 0 { return true }
                            try await Task.sleep(for: .milliseconds(200))
                        }
                        return false
                    }
                    #expect(done, "the restarted services finished the stream")
                } catch {
                    // Nothing a test starts outlives it, even when it fails midway.
                    for process in running.values where process.isRunning { kill(process.processIdentifier, SIGKILL) }
                    throw error
                }
                for process in running.values {
                    process.terminate()
                    _ = try await ServiceProcess.exitStatus(of: process)
                }
                let actualRows = try await DatabaseClient.with(server, logger: logger) {
                    try await self.entitlements($0)
                }
                #expect(actualRows == expectedRows, "the database equals the uninterrupted run's")

                var published: Set<String> = []
                for stream in [topics.entitlementChanges, topics.entitlementFamily, topics.entitlementRevocations] {
                    for record in try await kafka.readAll(stream, atLeast: 1, quiet: .seconds(2)) {
                        published.insert(record.header("event-id")?.text ?? "")
                    }
                }
                #expect(published == expectedEvents, "every event of the uninterrupted run published, and nothing else")
            }
        }
    }
}
