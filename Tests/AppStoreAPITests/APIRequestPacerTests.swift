import AppStoreAPI
import AppStoreModels
import Foundation
import Testing

/// The pacer keeps each (app, environment, endpoint) under its rate with times given, not slept: successive
/// calls are spaced by the interval, Sandbox at a tenth, endpoints and apps apart, and a 429's `Retry-After`
/// moves that endpoint's next slot.
@Suite struct APIRequestPacerTests {
    @Test func callsAreSpacedPerAppEnvironmentAndEndpoint() async {
        let pacer = APIRequestPacer(productionRatePerSecond: 50)
        let now = 1_000.0
        var waits: [Double] = []
        for _ in 0..<4 {
            waits.append(
                await pacer.reserve(
                    bundleID: "a", environment: .production, path: "/inApps/v2/history/1", now: now))
        }
        #expect(zip(waits, [0, 0.02, 0.04, 0.06]).allSatisfy { abs($0 - $1) < 1e-9 }, "\(waits)")
        // Another transaction id is the same endpoint; statuses, another app and Sandbox are budgets of their own.
        let sameEndpoint = await pacer.reserve(
            bundleID: "a", environment: .production, path: "/inApps/v2/history/2", now: now)
        #expect(abs(sameEndpoint - 0.08) < 1e-9)
        #expect(
            await pacer.reserve(bundleID: "a", environment: .production, path: "/inApps/v1/subscriptions/1", now: now)
                == 0)
        #expect(
            await pacer.reserve(bundleID: "b", environment: .production, path: "/inApps/v2/history/1", now: now) == 0)
        #expect(await pacer.reserve(bundleID: "a", environment: .sandbox, path: "/inApps/v2/history/1", now: now) == 0)
        let sandboxNext = await pacer.reserve(
            bundleID: "a", environment: .sandbox, path: "/inApps/v2/history/1", now: now)
        #expect(abs(sandboxNext - 0.2) < 1e-9, "Sandbox gets a tenth: \(sandboxNext)")
        // Later calls wait only for what is left of the spacing.
        let later = await pacer.reserve(
            bundleID: "a", environment: .production, path: "/inApps/v1/subscriptions/9", now: now + 10)
        #expect(later == 0)
    }

    @Test func aRetryAfterPausesTheEndpoint() async {
        let pacer = APIRequestPacer(productionRatePerSecond: 50)
        let now = Date().timeIntervalSince1970
        await pacer.pause(
            bundleID: "a", environment: .production, path: "/inApps/v1/subscriptions/1",
            until: Date(timeIntervalSince1970: now + 3))
        let wait = await pacer.reserve(
            bundleID: "a", environment: .production, path: "/inApps/v1/subscriptions/2", now: now)
        #expect(wait > 2.9 && wait <= 3.0 + 1e-9, "\(wait)")
        #expect(
            await pacer.reserve(bundleID: "a", environment: .production, path: "/inApps/v2/history/1", now: now) == 0)
    }

    @Test func theEndpointIsThePathsFirstThreeSegments() {
        #expect(APIRequestPacer.endpoint(of: "/inApps/v2/history/123") == "/inApps/v2/history")
        #expect(APIRequestPacer.endpoint(of: "/inApps/v1/subscriptions/123") == "/inApps/v1/subscriptions")
        #expect(APIRequestPacer.endpoint(of: "/inApps/v1/transactions/appTransactions/9") == "/inApps/v1/transactions")
    }
}
