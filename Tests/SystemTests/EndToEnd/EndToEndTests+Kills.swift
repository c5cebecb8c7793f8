@_spi(Testing) import AppStoreSimKit
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// How ``EndToEndTests`` posts a scenario while it SIGKILLs services one after another.
extension EndToEndTests {
    /// Posts the plan; each kill happens while the next equal share of the notifications is being posted, and the
    /// service is started again at once. Posts that fail meanwhile are Apple's to retry (the sim's retries).
    ///
    /// The plan is posted in segments, one per kill and one after: segment `k` ends where the `k+1`-th share of the
    /// notifications has been posted once, and the segment after it waits until kill `k` is done and the service is
    /// started again. So however fast the posts go, and however long a restart takes, every kill happens halfway
    /// through its share with notifications still to come.
    static func deliver(_ sim: SimHarness, fleet: ServiceFleet, kills: [String]) async throws {
        let plan = sim.simulator.deliveryPlan()
        let unique = sim.simulator.scenario.notifications.count
        let ingest = await fleet.ingestURL
        // Where each notification of the plan is posted first, in plan order.
        var seen = Set<String>(), firstPosts: [Int] = []
        for (index, item) in plan.enumerated() where seen.insert(item.uuid).inserted { firstPosts.append(index) }
        let shares = kills.indices.map { unique * ($0 + 1) / (kills.count + 1) }
        let cuts = [0] + shares.map { firstPosts[$0] } + [plan.count]
        let (restarted, restartedSignal) = AsyncStream<Void>.makeStream()
        // Every segment posts even when a kill or a start fails (the test then fails on that).
        defer { restartedSignal.finish() }
        let delivery = Task {
            var gates = restarted.makeAsyncIterator()
            for segment in 0..<(cuts.count - 1) {
                if segment > 0 { _ = await gates.next() }
                let items = Array(plan[cuts[segment]..<cuts[segment + 1]])
                _ = await sim.simulator.deliver(items, http: sim.http, to: ingest)
            }
        }
        for (index, name) in kills.enumerated() {
            // Halfway through this kill's share; its segment ends at the share, so this is reached whatever the pace.
            let halfway = ((index == 0 ? 0 : shares[index - 1]) + shares[index] + 1) / 2
            while await sim.simulator.store.attemptedCount() < halfway {
                try await Task.sleep(for: .milliseconds(50))
            }
            let attempted = await sim.simulator.store.attemptedCount()
            await fleet.kill(name)
            #expect(attempted < unique, "\(name) was killed while notifications were still flowing")
            try await fleet.start(name, http: sim.http)
            restartedSignal.yield()
        }
        _ = await delivery.value
        await sim.simulator.retryUndelivered(http: sim.http, to: ingest)
        #expect(await sim.simulator.store.undeliveredCount() == 0, "Apple's retries delivered everything")
    }
}
