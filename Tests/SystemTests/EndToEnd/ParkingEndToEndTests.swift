import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import Foundation
import Logging
import PipelineRecords
import RdKafka
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// Apple's notifications for an app and an environment the pipeline is not configured for yet, against the real
/// binaries: every one is answered 200 and stored (Apple may not retry a 4xx), the chain-verifier parks each in
/// the DLQ as `unknown-app` or `unknown-environment`, nothing is applied; once the app and environment are
/// configured, `iapctl replay --reason …` brings them back and the database ends equal to the sim.
@Suite(.heavy, .tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(8))) struct ParkingEndToEndTests {
    static var logger: Logger {
        var logger = Logger(label: "parking")
        logger.logLevel = .critical
        return logger
    }

    @Test func anUnconfiguredAppsNotificationsAreParkedAndReplayedAfterConfiguring() async throws {
        try await withLocalBroker { bootstrap in
            try await withLocalPostgres { databaseURL in
                try await SimHarness.with(
                    customers: 60, seed: 71,
                    configure: {
                        $0.retryDelays = [.seconds(2), .seconds(4)]
                        $0.environments = [.production, .sandbox]
                    }
                ) { sim in
                    let logger = Self.logger
                    let topics = PipelineTopics()
                    let kafka = KafkaTestClient(bootstrapServers: [bootstrap])
                    try await kafka.createTopics(topics.all.map { ($0, 2) })
                    try await migrateDatabase(try DatabaseSettings(url: databaseURL), logger: logger)
                    let directory = try LocalComponents.temporaryDirectory("parking")
                    let configured = try sim.pipelineEnvironment(
                        directory: directory, bootstrap: bootstrap, databaseURL: databaseURL)
                    // Before: the team has configured another app, and Production only.
                    var before = configured
                    before["APPSTORE_APPS"] = "com.example.other:99"
                    before["APPSTORE_ENVIRONMENTS"] = "Production"
                    let unique = sim.simulator.scenario.notifications.count
                    let early = try ServiceFleet(environment: before, directory: directory)
                    try await early.whileRunning(http: sim.http) {
                        let ingest = await early.ingestURL
                        _ = await sim.simulator.deliver(sim.simulator.deliveryPlan(), http: sim.http, to: ingest)
                        await sim.simulator.retryUndelivered(http: sim.http, to: ingest)
                        #expect(
                            await sim.simulator.store.undeliveredCount() == 0,
                            "every notification of the unconfigured app answered 200")
                        let parked = try await kafka.readAll(
                            topics.rejected, atLeast: unique, quiet: .seconds(2), timeout: .seconds(180))
                        let reasons = try parked.map {
                            try JSONDecoder().decode(RejectedNotificationRecord.self, from: Data($0.value ?? [])).reason
                        }
                        let counted = Dictionary(reasons.map { ($0, 1) }, uniquingKeysWith: +)
                        print("parking: \(unique) notifications of an unconfigured app, parked as \(counted)")
                        #expect(
                            Set(reasons) == ["unknown-app", "unknown-environment"],
                            "Production ones are an unknown app's, Sandbox ones an unknown environment's: \(counted)")
                        let uuids = parked.compactMap {
                            try? JSONDecoder().decode(RejectedNotificationRecord.self, from: Data($0.value ?? []))
                                .notificationUUID
                        }
                        #expect(Set(uuids).count == unique, "every notification parked (a duplicate once per delivery)")
                    }
                    let applied = try await DatabaseClient.with(try DatabaseSettings(url: databaseURL), logger: logger)
                    {
                        try await PipelineHarness.storedEntitlements(client: $0, logger: logger)
                    }
                    #expect(applied.isEmpty, "nothing of the unconfigured app applied: \(applied.prefix(3))")

                    // After: the app and Sandbox configured; the parked notifications replayed, reason by reason.
                    let fleet = try ServiceFleet(environment: configured, directory: directory)
                    try await fleet.whileRunning(http: sim.http) {
                        for reason in ["unknown-app", "unknown-environment"] {
                            let (status, output) = try await IAPCtlProcess.run(
                                ["replay", "--reason", reason, "--group", "parked-\(reason)", "--quiet-ms", "3000"],
                                environment: ["KAFKA_BOOTSTRAP_SERVERS": bootstrap])
                            #expect(status == 0 && output.contains("replayed"), "\(reason): \(output)")
                        }
                        let difference = try await PipelineHarness.waitForExpectedState(
                            sim, databaseURL: databaseURL, timeout: .seconds(300), logger: logger)
                        #expect(
                            difference.missing.isEmpty && difference.extra.isEmpty,
                            "the database equals the sim: missing \(difference.missing.prefix(3)), extra \(difference.extra.prefix(3))"
                        )
                    }
                }
            }
        }
    }
}
