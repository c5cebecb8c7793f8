import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import RdKafka
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// The product end to end through outages while notifications flow (the six service binaries, Tansu,
/// PostgreSQL with `fsync=on`, the sim): the broker frozen for 20 s (SIGSTOP, then SIGCONT: it keeps its data),
/// PostgreSQL crashed (`-m immediate`) and started again 10 s later, and the App Store API answering 429 and 500 for a stretch.
/// Services that exit (a fenced producer, a failed relay) are started again as an orchestrator would. While a
/// dependency is down the services say not ready; afterwards the database equals the sim's state, nothing is
/// lost or applied twice, and no downstream event is missing or new.
@Suite(.heavy, .tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(12))) struct OutageEndToEndTests {
    @Test func brokerFreezePostgresCrashAndAPIErrorsLoseNothing() async throws {
        try await withFreezableLocalBroker { bootstrap, brokerPID in
            try await withCrashablePostgres { databaseURL, postgres in
                try await SimHarness.with(
                    customers: 500, seed: 64,
                    configure: {
                        $0.retryDelays = [.seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(16)]
                        $0.environments = [.production, .sandbox]
                        $0.rate = 120
                    }
                ) { sim in
                    let logger = EndToEndTests.logger
                    try await KafkaTestClient(bootstrapServers: [bootstrap]).createTopics(
                        PipelineTopics().all.map { ($0, 4) })
                    try await migrateDatabase(try DatabaseSettings(url: databaseURL), logger: logger)
                    let directory = try LocalComponents.temporaryDirectory("outages")
                    var environment = try sim.environment(directory: directory, bootstrap: bootstrap)
                    environment.merge([
                        "DATABASE_URL": databaseURL, "APPSTORE_ENVIRONMENTS": "Production,Sandbox",
                        "LOG_LEVEL": "notice",
                        "KAFKA_SESSION_TIMEOUT_MS": "6000", "RESOLVER_RATE_PER_SECOND": "50",
                        "RESOLVER_RETRY_BASE_MS": "200",
                        "RESOLVER_RETRY_MAX_MS": "2000", "INGEST_PRODUCE_TIMEOUT_MS": "3000",
                        "DATABASE_TRANSACTION_TIMEOUT_MS": "10000",
                    ]) { _, new in new }
                    let fleet = try ServiceFleet(environment: environment, directory: directory)
                    try await fleet.startAll(http: sim.http)
                    let supervisor = Task {
                        while !Task.isCancelled {
                            try? await fleet.superviseOnce()
                            try? await Task.sleep(for: .milliseconds(500))
                        }
                    }
                    do {
                        let plan = sim.simulator.deliveryPlan()
                        let unique = sim.simulator.scenario.notifications.count
                        let ingest = await fleet.ingestURL
                        let delivery = Task { await sim.simulator.deliver(plan, http: sim.http, to: ingest) }
                        func waitForShare(_ share: Double) async throws {
                            while await Double(sim.simulator.store.attemptedCount()) < share * Double(unique) {
                                try await Task.sleep(for: .milliseconds(100))
                            }
                        }
                        // 1. The broker frozen for 20 s mid-delivery.
                        try await waitForShare(0.15)
                        let frozenAt = ContinuousClock.now
                        try #require(try await freezeProcess(brokerPID), "the broker is stopped")
                        let ingestNotReadyWhileFrozen = await fleet.saysNotReady("ingest", within: .seconds(18))
                        try await Task.sleep(until: frozenAt + .seconds(20))
                        kill(brokerPID, SIGCONT)
                        #expect(ingestNotReadyWhileFrozen, "ingest says not ready while the broker is frozen")
                        // 2. PostgreSQL crashed, and started again 10 s after the crash.
                        try await waitForShare(0.45)
                        try await postgres.crash()
                        let crashedAt = ContinuousClock.now
                        let updaterNotReadyWhileDown = await fleet.saysNotReady(
                            "entitlement-updater", within: .seconds(9))
                        try await Task.sleep(until: crashedAt + .seconds(10))
                        try await postgres.start()
                        #expect(updaterNotReadyWhileDown, "the updater says not ready while PostgreSQL is down")
                        // 3. The App Store API failing for a stretch.
                        try await waitForShare(0.7)
                        await sim.setFaults(SimStore.Faults(serverErrors: 40, rateLimited: 40))
                        _ = await delivery.value
                        await sim.simulator.retryUndelivered(http: sim.http, to: ingest)
                        #expect(
                            await sim.simulator.store.undeliveredCount() == 0, "Apple's retries delivered everything")
                        try await EndToEndTests.check(
                            sim, databaseURL: databaseURL, bootstrap: bootstrap, publisherKilled: true)
                        // The updater keeps every DLQ record as a row: none may be a good record dead-lettered by the outages.
                        let dead = try await DatabaseClient.with(try DatabaseSettings(url: databaseURL), logger: logger)
                        { client in
                            var rows: [String] = []
                            for try await (reason, detail) in try await client.query(
                                "SELECT reason, COALESCE(detail, '') FROM dead_letters", logger: logger
                            )
                            .decode((String, String).self) { rows.append(reason + ": " + detail) }
                            return rows
                        }
                        #expect(dead.isEmpty, "no good record dead-lettered during the outages: \(dead.prefix(3))")
                        print(
                            "outages: restarts by the supervisor \(await fleet.restarts), sim stats \(await sim.stats.calls)"
                        )
                    } catch {
                        supervisor.cancel()
                        await fleet.stopAll()
                        throw error
                    }
                    supervisor.cancel()
                    await fleet.stopAll()
                }
            }
        }
    }
}
