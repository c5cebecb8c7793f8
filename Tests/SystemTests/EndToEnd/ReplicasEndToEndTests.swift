@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// Scaling out and in under load: three replicas each of chain-verifier, entitlement-updater, refund-resolver
/// and event-publisher and two of ingest, on topics of twelve partitions, while the sim's notifications flow.
/// A replica of each is added, then one of each is stopped with SIGTERM (a scale-in), then one of each is
/// SIGKILLed and not replaced (a lost node); the consumer groups rebalance each time. Afterwards the database
/// equals the sim's state, nothing is lost or applied twice, and every subscription's events are downstream
/// exactly once each and in the order they were written.
@Suite(.heavy, .tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(15)))
struct ReplicasEndToEndTests {
    /// How many instances of each service run at the start.
    static let replicas = [
        "ingest": 2, "chain-verifier": 3, "entitlement-updater": 3, "refund-resolver": 3, "event-publisher": 3,
    ]
    /// The services scaled out, in and killed.
    static let scaled = ["ingest", "chain-verifier", "entitlement-updater", "refund-resolver", "event-publisher"]
    static let partitions = 12

    /// Once with REFUNDs as Apple sends them and once without `data.status` (the resolver's path), each half the size.
    @Test(arguments: RefundStatus.allCases)
    func replicasAddedStoppedAndKilledUnderLoadLoseNothingAndKeepEachSubscriptionsOrder(refunds: RefundStatus)
        async throws
    {
        try await withLocalBroker { bootstrap in
            try await withLocalPostgres { databaseURL in
                try await SimHarness.with(
                    customers: 500, seed: refunds == .carried ? 64 : 66,
                    configure: {
                        $0.retryDelays = [.seconds(2), .seconds(4), .seconds(8)]
                        $0.environments = [.production, .sandbox]
                        $0.refundCarriesStatus = refunds == .carried
                        // Slow enough that the whole plan of changes happens while notifications flow.
                        $0.rate = 250
                    }
                ) { sim in
                    let logger = EndToEndTests.logger
                    try await KafkaTestClient(bootstrapServers: [bootstrap]).createTopics(
                        PipelineTopics().all.map { ($0, Self.partitions) })
                    try await migrateDatabase(try DatabaseSettings(url: databaseURL), logger: logger)
                    let directory = try LocalComponents.temporaryDirectory("replicas")
                    let environment = try sim.pipelineEnvironment(
                        directory: directory, bootstrap: bootstrap, databaseURL: databaseURL)
                    let fleet = try ServiceFleet(
                        environment: environment, directory: directory, replicas: Self.replicas)
                    try await fleet.whileRunning(http: sim.http) {
                        let (changes, added) = try await Self.deliverWhileScaling(sim, fleet: fleet)
                        try await EndToEndTests.check(
                            sim, databaseURL: databaseURL, bootstrap: bootstrap, publisherKilled: true)
                        let counts = try await Self.applied(databaseURL: databaseURL, logger: logger)
                        print(
                            "replicas: \(changes.joined(separator: "; ")); notifications logged \(counts.logged), "
                                + "events \(counts.events), restarts by the supervisor \(await fleet.restarts)")
                        #expect(
                            await fleet.terminations.sorted() == Self.scaled.map { "\($0)#2" }.sorted(),
                            "every replica stopped with SIGTERM exited by itself")
                        #expect(await fleet.kills.sorted() == added.sorted(), "the added replicas were SIGKILLed")
                    }
                }
            }
        }
    }

    /// Delivers the plan in eight parts, each spread over the ingest instances running when it starts (a load
    /// balancer's view; the last part only once every change is made), while the fleet changes at a quarter, half
    /// and three quarters of the notifications:
    /// a replica of each service added, the second instance of each stopped with SIGTERM, the added one SIGKILLed.
    /// A supervisor starts again any instance that exits on its own, as an orchestrator would. Returns what changed
    /// and the replicas added.
    static func deliverWhileScaling(_ sim: SimHarness, fleet: ServiceFleet) async throws -> ([String], [String]) {
        let plan = sim.simulator.deliveryPlan()
        let unique = sim.simulator.scenario.notifications.count
        let parts = 8
        let size = (plan.count + parts - 1) / parts
        // The last part waits until every change is made, so each happens while notifications still flow however
        // long a graceful stop takes on a loaded machine.
        let (changesMade, changesMadeSignal) = AsyncStream<Void>.makeStream()
        defer { changesMadeSignal.finish() }
        let delivery = Task {
            for start in stride(from: 0, to: plan.count, by: size) {
                if start + size >= plan.count { for await _ in changesMade {} }
                let urls = await fleet.ingestURLs
                _ = await sim.simulator.deliver(
                    Array(plan[start..<min(start + size, plan.count)]), http: sim.http, spreadOver: urls)
            }
        }
        let supervisor = Task {
            while !Task.isCancelled {
                try? await fleet.superviseOnce()
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        defer { supervisor.cancel() }
        var changes: [String] = []
        var added: [String] = []
        for (step, share) in [0.25, 0.5, 0.75].enumerated() {
            while await Double(sim.simulator.store.attemptedCount()) < share * Double(unique) {
                try await Task.sleep(for: .milliseconds(50))
            }
            let attempted = await sim.simulator.store.attemptedCount()
            for service in Self.scaled {
                switch step {
                case 0: added.append(try await fleet.addReplica(of: service, http: sim.http))
                case 1: await fleet.remove("\(service)#2", graceful: true)
                default:
                    for name in added where ServiceFleet.service(of: name) == service {
                        await fleet.remove(name, graceful: false)
                    }
                }
            }
            let what = ["added a replica of each", "SIGTERM to one of each", "SIGKILL to one of each"][step]
            changes.append("\(what) at \(attempted)/\(unique)")
            #expect(await sim.simulator.store.attemptedCount() < unique, "\(what) while notifications still flowed")
        }
        changesMadeSignal.finish()
        await delivery.value
        await sim.simulator.retryUndelivered(http: sim.http, spreadOver: await fleet.ingestURLs)
        #expect(await sim.simulator.store.undeliveredCount() == 0, "Apple's retries delivered everything")
        return (changes, added)
    }

    /// How many notifications the log holds and how many events the outbox wrote.
    static func applied(databaseURL: String, logger: Logger) async throws -> (logged: Int, events: Int) {
        try await DatabaseClient.with(try DatabaseSettings(url: databaseURL), logger: logger) { client in
            var counts = (logged: 0, events: 0)
            for try await (logged, events) in try await client.query(
                "SELECT (SELECT count(*) FROM notification_log), (SELECT count(*) FROM outbox)", logger: logger
            ).decode((Int, Int).self) {
                counts = (logged, events)
            }
            return counts
        }
    }
}
