import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import Entitlements
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import RdKafka
import ServiceRuntime
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// The whole pipeline, its services as processes of their binaries, against the sim: refunds resolved through real status calls, an ingest outage
/// recovered by `iapctl backfill --only-failures` or by the reconciler, and the database ending exactly in
/// the state the sim says each customer must have.
@Suite(.heavy, .tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(6))) struct RecoveryFlowTests {
    static var logger: Logger {
        var logger = Logger(label: "recovery-flow")
        logger.logLevel = .critical
        return logger
    }

    /// Runs the pipeline with a sim; delivers the middle third of the plan while ingest is unreachable.
    static func runWithOutage(
        customers: Int, seed: UInt64, reconcile: Bool,
        recover: @escaping @Sendable (SimHarness, String) async throws -> Void
    ) async throws {
        try await withLocalBroker { bootstrap in
            try await withLocalPostgres { databaseURL in
                // Refunds without data.status: each one is the resolver's to settle, the path these tests prove.
                try await SimHarness.with(
                    customers: customers, seed: seed, configure: { $0.refundCarriesStatus = false }
                ) { sim in
                    let logger = Self.logger
                    try await KafkaTestClient(bootstrapServers: [bootstrap]).createTopics(
                        PipelineTopics().all.map { ($0, 2) })
                    try await migrateDatabase(try DatabaseSettings(url: databaseURL), logger: logger)
                    let directory = try LocalComponents.temporaryDirectory("recovery")
                    var environment = try sim.pipelineEnvironment(
                        directory: directory, bootstrap: bootstrap, databaseURL: databaseURL)
                    environment.merge([
                        "APPSTORE_ENVIRONMENTS": "Production", "RESOLVER_RATE_PER_SECOND": "20",
                        "RECONCILE_INTERVAL_SECONDS": reconcile ? "3" : "0", "RECONCILE_WINDOW_HOURS": "2160",
                    ]) { _, new in new }
                    let fleet = try ServiceFleet(environment: environment, directory: directory)
                    try await fleet.whileRunning(http: sim.http) {
                        try await Self.deliverWithOutage(
                            sim, to: await fleet.ingestURL, databaseURL: databaseURL, bootstrap: bootstrap,
                            recover: recover)
                    }
                }
            }
        }
    }

    /// Delivers the plan to `ingest`, its middle third to an address nobody listens on (the outage); recovers, and
    /// checks the database ends in the sim's state with every refund resolved.
    static func deliverWithOutage(
        _ sim: SimHarness, to ingest: String, databaseURL: String, bootstrap: String,
        recover: @Sendable (SimHarness, String) async throws -> Void
    ) async throws {
        let logger = Self.logger
        let plan = sim.simulator.deliveryPlan()
        let third = plan.count / 3
        let down = "http://127.0.0.1:\(try LocalComponents.freePortBelowEphemeralRange())/notifications"
        let reachable = Array(plan.prefix(third)) + Array(plan.dropFirst(2 * third))
        _ = await sim.simulator.deliver(Array(plan.prefix(third)), http: sim.http, to: ingest)
        let outage = await sim.simulator.deliver(
            Array(plan.dropFirst(third).prefix(third)), http: sim.http, to: down,
            timeout: .milliseconds(300))
        _ = await sim.simulator.deliver(Array(plan.dropFirst(2 * third)), http: sim.http, to: ingest)
        // Outside the outage ingest takes everything, with Apple's retries: on a loaded machine it may
        // answer a 503 first (its designed answer under load, which Apple retries). Retried here for the
        // reachable notifications only, so the outage's stay for the backfill to find.
        let reachableIds = Set(reachable.map(\.uuid))
        for _ in 0..<5 {
            let failed = await sim.simulator.store.undelivered(among: reachableIds)
            if failed.isEmpty { break }
            _ = await sim.simulator.deliver(
                reachable.filter { failed.contains($0.uuid) }, http: sim.http, to: ingest)
        }
        #expect(
            await sim.simulator.store.undelivered(among: reachableIds).isEmpty,
            "ingest took every notification sent outside the outage")
        #expect(outage.succeeded == 0 && outage.failed == third)
        let undelivered = await sim.simulator.store.undeliveredCount()
        #expect(undelivered > 0, "the outage left notifications undelivered")

        try await recover(sim, bootstrap)
        let difference = try await PipelineHarness.waitForExpectedState(
            sim, databaseURL: databaseURL, timeout: .seconds(150), logger: logger)
        #expect(difference.missing.isEmpty, "missing: \(difference.missing.sorted().prefix(10))")
        #expect(difference.extra.isEmpty, "unexpected: \(difference.extra.sorted().prefix(10))")
        try await Self.checkRefunds(sim, databaseURL: databaseURL, bootstrap: bootstrap)
    }

    /// Refund of an old period: still active after a status snapshot; of the latest period: revoked, with events.
    static func checkRefunds(_ sim: SimHarness, databaseURL: String, bootstrap: String) async throws {
        let scenario = sim.simulator.scenario
        #expect(
            (scenario.lifeCycles["refund-of-old-period"] ?? 0) > 0
                && (scenario.lifeCycles["refund-of-latest-period"] ?? 0) > 0,
            "the seed covers both refunds")
        let expected = Dictionary(
            scenario.expected.map { ($0.originalTransactionId, $0) }, uniquingKeysWith: { a, _ in a })
        let refunds = scenario.notifications.filter {
            $0.type == "REFUND" && $0.transaction?.type == .autoRenewableSubscription
        }
        var latest: [String] = []
        for refund in refunds {
            let original = refund.transaction!.originalTransactionId!
            let purchase = scenario.purchases[original]!
            let refundedLatest = refund.transaction?.transactionId == purchase.transactions.last?.transactionId
            if refundedLatest && purchase.status == .revoked {
                #expect(expected[original]?.revoked == true)
                latest.append(expected[original]!.customer)
            } else if !refundedLatest {
                #expect(expected[original]?.active == true, "a refund of an old period leaves \(original) active")
            }
        }
        let (snapshots, published) = try await DatabaseClient.with(
            try DatabaseSettings(url: databaseURL), logger: Self.logger
        ) { client in
            /// One count from the database.
            @Sendable func count(_ query: PostgresQuery) async throws -> Int {
                var count = 0
                for try await value in try await client.query(query, logger: Self.logger).decode(Int.self) {
                    count = value
                }
                return count
            }
            // Every change event the database holds is on the topic once the publisher has drained the outbox.
            let drained = try await pollUntil(within: .seconds(120)) {
                try await count("SELECT count(*) FROM outbox_pending") == 0 ? true : nil
            }
            #expect(drained == true, "the publisher drained the outbox")
            return (
                try await count(
                    "SELECT count(*) FROM notification_log WHERE notification_type = 'STATUS_SNAPSHOT' AND outcome = 'applied'"
                ),
                try await count("SELECT count(*) FROM outbox WHERE topic = \(PipelineTopics().entitlementChanges)")
            )
        }
        #expect(snapshots > 0, "refunds were resolved through status calls")
        let changes = try await KafkaTestClient(bootstrapServers: [bootstrap])
            .readAll(PipelineTopics().entitlementChanges, atLeast: published, quiet: .seconds(2), timeout: .seconds(60))
        let revokedCustomers = Set(
            changes.compactMap { try? JSONDecoder().decode(EntitlementEvent.self, from: Data($0.value ?? [])) }
                .filter { $0.eventType == "entitlement.revoked" }.map(\.customer))
        let unrevoked = Set(latest).subtracting(revokedCustomers)
        let explanation = unrevoked.isEmpty ? "" : try await Self.history(of: unrevoked, databaseURL: databaseURL)
        #expect(unrevoked.isEmpty, "every refund of a latest period emitted entitlement.revoked; \(explanation)")
    }

    /// What the database holds about customers, to explain a failure: their subjects' log rows (with the
    /// transaction id that applied each), their entitlement rows and their outbox events.
    static func history(of customers: Set<String>, databaseURL: String) async throws -> String {
        try await DatabaseClient.with(try DatabaseSettings(url: databaseURL), logger: Self.logger) { client in
            var lines: [String] = []
            for customer in customers.sorted() {
                let query: PostgresQuery = """
                    SELECT 'log ' || l.notification_type || '/' || coalesce(l.subtype, '') || ' signed ' || l.signed_date || ' '
                           || l.outcome || ' advances ' || l.advances_subject || ' xid ' || l.xmin::text || ' ' || coalesce(l.detail, '')
                    FROM notification_log l
                    WHERE l.subject IN (SELECT original_transaction_id FROM transactions WHERE app_account_token::text = \(customer)
                                        OR original_transaction_id = \(customer))
                    UNION ALL
                    SELECT 'entitlement ' || e.product_id || ' active ' || e.active || ' revoked ' || coalesce(e.revoked_at::text, '-')
                           || ' original ' || e.original_transaction_id || ' source ' || e.source_transaction_id
                    FROM entitlements e WHERE e.customer = \(customer)
                    UNION ALL
                    SELECT 'event ' || (o.payload->>'eventType') || ' by ' || (o.payload->'cause'->>'notificationType') || ' ' || o.id
                    FROM outbox o WHERE o.payload->>'customer' = \(customer)
                    """
                for try await line in try await client.query(query, logger: Self.logger).decode(String.self) {
                    lines.append(customer + ": " + line)
                }
            }
            return lines.joined(separator: "\n")
        }
    }

    @Test func backfillOfOnlyFailuresBringsTheDatabaseToTheSimsState() async throws {
        try await Self.runWithOutage(customers: 70, seed: 21, reconcile: false) { sim, bootstrap in
            let directory = try LocalComponents.temporaryDirectory("backfill")
            let since = Int64(Date().timeIntervalSince1970 * 1000) - 90 * 86_400_000
            let (status, text) = try await IAPCtlProcess.run(
                ["backfill", "--since", String(since), "--only-failures"],
                environment: try sim.environment(directory: directory, bootstrap: bootstrap))
            #expect(status == 0, "iapctl backfill: \(text)")
            #expect(text.contains("backfill: "), "\(text)")
            #expect(await sim.stats.calls["notification-history"] ?? 0 >= 1)
        }
    }

    @Test func theReconcilerRecoversTheOutageOnItsOwn() async throws {
        try await Self.runWithOutage(customers: 40, seed: 22, reconcile: true) { sim, _ in
            // No operator step: the resolver's reconciler backfills onlyFailures every 3 s. It must be what asks the
            // sim's notification history (nothing else here does); the state check that follows proves what it brought.
            try await Polling.until(looks: 600, every: .milliseconds(100)) {
                await (sim.stats.calls["notification-history"] ?? 0) > 0
            }
            #expect(
                await sim.stats.calls["notification-history"] ?? 0 >= 1,
                "the reconciler asked for the notification history")
        }
    }
}
