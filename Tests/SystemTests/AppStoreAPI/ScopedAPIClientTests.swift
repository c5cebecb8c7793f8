import AppStoreAPI
import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import Foundation
import JWSVerification
import NotificationPipeline
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// Calls are made per app and per environment: the token names the app the call is about, the base URL is
/// the environment the data came from, and a bare transaction id of unknown environment tries Production,
/// then Sandbox on 4040010. The sim serves the two environments apart, as Apple's two hosts do.
@Suite(.tags(.integration), .notInUnitRuns, .timeLimit(.minutes(3))) struct ScopedAPIClientTests {
    @Test func eachEnvironmentAnswersForItsOwnPurchasesAndNotifications() async throws {
        try await SimHarness.with(customers: 16, seed: 5, configure: { $0.environments = [.production, .sandbox] }) {
            sim in
            let purchases = sim.simulator.scenario.purchases.values.filter {
                $0.productType == .autoRenewableSubscription
            }
            let sandbox = try #require(purchases.first { $0.environment == .sandbox })
            let production = try #require(purchases.first { $0.environment == .production })
            let client = try sim.client()

            let inSandbox = try client.scoped(bundleID: sim.app.bundleId, environment: .sandbox)
            let statuses = try await inSandbox.subscriptionStatuses(sandbox.originalTransactionId)
            #expect(
                statuses.environment == .sandbox
                    && statuses.subscriptions.first?.originalTransactionId == sandbox.originalTransactionId)

            let inProduction = try client.scoped(bundleID: sim.app.bundleId, environment: .production)
            await #expect(throws: AppStoreAPIError.self, "a Sandbox purchase is not found in Production") {
                _ = try await inProduction.subscriptionStatuses(sandbox.originalTransactionId)
            }
            await #expect(throws: AppStoreAPIError.self, "nor a Production purchase in Sandbox") {
                _ = try await inSandbox.subscriptionStatuses(production.originalTransactionId)
            }
            // A bare transaction id whose environment is unknown: Production first, then Sandbox on 4040010.
            let unknown = try client.scoped(
                bundleID: sim.app.bundleId, environment: .production, fallbackToSandbox: true)
            #expect(
                try await unknown.transactionInfo(sandbox.transactions[0].transactionId!).transaction.environment
                    == .sandbox)
            #expect(
                try await unknown.transactionInfo(production.transactions[0].transactionId!).transaction.environment
                    == .production)

            // Notification history is per environment too.
            let plan = sim.simulator.signed
            _ = await sim.simulator.deliver(plan, http: sim.http, to: sim.sinkURL)
            let window = NotificationHistoryRequest(
                startDate: 0, endDate: Int64(Date().timeIntervalSince1970 * 1000) + 1)
            let sandboxHistory = try await inSandbox.notificationHistory(window)
            let productionHistory = try await inProduction.notificationHistory(window)
            #expect(
                !sandboxHistory.isEmpty
                    && sandboxHistory.allSatisfy { $0.notification.payload.rawEnvironment == "Sandbox" })
            #expect(productionHistory.allSatisfy { $0.notification.payload.rawEnvironment == "Production" })
            #expect(sandboxHistory.count + productionHistory.count == plan.count)
        }
    }

    @Test func theTokenNamesTheAppTheCallIsAbout() async throws {
        try await SimHarness.with(customers: 4, seed: 6) { sim in
            let purchase = try #require(
                sim.simulator.scenario.purchases.values.first { $0.productType == .autoRenewableSubscription })
            let client = try sim.client()
            #expect(client.bundleID == sim.app.bundleId)
            let otherApp = try client.scoped(bundleID: "com.example.other", environment: .production)
            #expect(otherApp.bundleID == "com.example.other")
            do {
                _ = try await otherApp.subscriptionStatuses(purchase.originalTransactionId)
                Issue.record("the sim serves only its own app's bid")
            } catch let error as AppStoreAPIError {
                #expect(error.status == 401, "signed for com.example.other: \(error)")
            }
            #expect(await sim.stats.rejectedTokens == 1)
            #expect(throws: AppStoreAPIError.self, "Xcode and LocalTesting have no server API") {
                _ = try client.scoped(bundleID: sim.app.bundleId, environment: .xcode)
            }
        }
    }

    @Test func scopesCoverEveryAppInEveryAcceptedServerEnvironment() {
        let accepted = AcceptedApps(
            apps: [AppIdentity(bundleId: "a"), AppIdentity(bundleId: "b")],
            environments: [.production, .sandbox, .xcode])
        #expect(
            accepted.apiScopes.map(\.description) == ["a (Production)", "a (Sandbox)", "b (Production)", "b (Sandbox)"])
    }
}
