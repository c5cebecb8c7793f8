import AppStoreAPI
import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import Foundation
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// The support endpoints of the API client against the sim, with Apple's rules: Look Up Order ID (valid and
/// invalid), Get Refund History across pages, Send Consumption Information V1 and v2 validation, and renewal-date
/// extensions (active only, at most two a year, a repeated request identifier applied once, bad days and reasons
/// refused), a mass extension polled to the end.
@Suite(.tags(.integration), .notInUnitRuns) struct SupportAPIAgainstSimTests {
    @Test func ordersAndRefundHistoryEveryPage() async throws {
        try await SimHarness.with(customers: 60, seed: 9, configure: { $0.apiPageSize = 1 }) { sim in
            let client = try sim.client()
            let purchases = sim.simulator.scenario.purchases.values.sorted {
                $0.originalTransactionId < $1.originalTransactionId
            }
            let renewal = try #require(purchases.first { $0.transactions.count >= 3 }).transactions[2]
            let order = try #require(try await client.lookUpOrder(SimOrders.orderId(for: renewal.transactionId!)))
            #expect(
                order.environment == .production
                    && order.transactions.map(\.transaction.transactionId) == [renewal.transactionId])
            #expect(try await client.lookUpOrder("MAAAAAAAAA") == nil, "an invalid order id is status 1, not an error")

            // Three periods of one subscription refunded: at page size 1 each refund is a page of its own.
            let owner = try #require(
                purchases.first { $0.productType == .autoRenewableSubscription && $0.transactions.count >= 3 })
            let refunded = owner.transactions.prefix(3).map(\.transactionId!)
            for (index, id) in refunded.reversed().enumerated() {
                await sim.simulator.store.refund(id, at: 1_700_000_000_000 + Int64(index) * 1000)
            }
            let before = await sim.stats.calls["refund-history"] ?? 0
            let history = try await client.refundHistory(owner.transactions[0].transactionId!)
            #expect(
                history.transactions.map(\.transaction.transactionId!) == Array(refunded.reversed()),
                "every page, oldest refund first")
            #expect((await sim.stats.calls["refund-history"] ?? 0) - before == 3, "one call per page of one")
            await #expect(throws: AppStoreAPIError.self) { try await client.refundHistory("1999") }
        }
    }

    @Test func consumptionInformationIsCheckedAsAppleChecksIt() async throws {
        try await SimHarness.with(customers: 20, seed: 5) { sim in
            let client = try sim.client(retry: .none)
            let purchases = sim.simulator.scenario.purchases.values.sorted {
                $0.originalTransactionId < $1.originalTransactionId
            }
            let subscription = try #require(purchases.first { $0.productType == .autoRenewableSubscription })
            let id = subscription.transactions[0].transactionId!
            func code(_ call: () async throws -> Void) async -> Int? {
                do {
                    try await call()
                    return nil
                } catch let error as AppStoreAPIError { return error.errorCode } catch { return -1 }
            }
            let good = ConsumptionRequest(
                customerConsented: true, deliveryStatus: "DELIVERED", refundPreference: "DECLINE",
                sampleContentProvided: false)
            #expect(await code { try await client.sendConsumptionInformation(id, good) } == nil)
            var noConsent = good
            noConsent.customerConsented = false
            #expect(await code { try await client.sendConsumptionInformation(id, noConsent) } == 4_000_033)
            var percentage = good
            percentage.consumptionPercentage = 10_000
            #expect(
                await code { try await client.sendConsumptionInformation(id, percentage) } == 4_000_032,
                "no percentage for an auto-renewable")
            let v1 = ConsumptionRequestV1(
                accountTenure: 3, appAccountToken: "", consumptionStatus: 1, customerConsented: true, deliveryStatus: 0,
                lifetimeDollarsPurchased: 2, lifetimeDollarsRefunded: 1, platform: 1, playTime: 2, refundPreference: 2,
                sampleContentProvided: false, userStatus: 1)
            #expect(await code { try await client.sendConsumptionInformationV1(id, v1) } == nil)
            var badTenure = v1
            badTenure.accountTenure = 9
            #expect(await code { try await client.sendConsumptionInformationV1(id, badTenure) } == 4_000_035)
            #expect(
                await sim.simulator.store.consumptionAnswers.map(\.version) == ["v2", "v1"],
                "only the valid answers were accepted")
        }
    }

    @Test func renewalDateExtensionsFollowApplesRules() async throws {
        try await SimHarness.with(customers: 40, seed: 13) { sim in
            let client = try sim.client(retry: .none)
            let store = sim.simulator.store
            let active = await store.activeSubscriptions(of: ScenarioGenerator.subscriptionProduct, in: .production)
            let chosen = try #require(active.first)
            let before = try #require(
                await store.purchase(for: chosen, in: .production)?.transactions.last?.expiresDate?
                    .millisecondsSince1970)
            let first = try await client.extendRenewalDate(
                chosen, ExtendRenewalDateRequest(extendByDays: 5, extendReasonCode: 1, requestIdentifier: "a"))
            #expect(first.success == true && first.effectiveDate == before + 5 * 86_400_000)
            let repeated = try await client.extendRenewalDate(
                chosen, ExtendRenewalDateRequest(extendByDays: 5, extendReasonCode: 1, requestIdentifier: "a"))
            #expect(repeated.effectiveDate == first.effectiveDate, "the same request identifier extends once")
            _ = try await client.extendRenewalDate(
                chosen, ExtendRenewalDateRequest(extendByDays: 1, extendReasonCode: 1, requestIdentifier: "b"))
            func code(_ request: ExtendRenewalDateRequest, _ original: String) async -> Int? {
                do {
                    _ = try await client.extendRenewalDate(original, request)
                    return nil
                } catch { return error.errorCode }
            }
            #expect(
                await code(
                    ExtendRenewalDateRequest(extendByDays: 1, extendReasonCode: 1, requestIdentifier: "c"), chosen)
                    == 4_030_005, "two a year")
            let ended = try #require(
                sim.simulator.scenario.purchases.values.first {
                    $0.productType == .autoRenewableSubscription && $0.status == .expired
                        && $0.transactions.first?.inAppOwnershipType != .assigned
                })
            #expect(
                await code(
                    ExtendRenewalDateRequest(extendByDays: 1, extendReasonCode: 1, requestIdentifier: "d"),
                    ended.originalTransactionId) == 4_030_004)
            #expect(
                await code(
                    ExtendRenewalDateRequest(extendByDays: 91, extendReasonCode: 1, requestIdentifier: "e"), chosen)
                    == 4_000_009)
            #expect(
                await code(
                    ExtendRenewalDateRequest(extendByDays: 1, extendReasonCode: 4, requestIdentifier: "f"), chosen)
                    == 4_000_010)

            let mass = MassExtendRenewalDateRequest(
                extendByDays: 2, extendReasonCode: 3, requestIdentifier: "mass-1",
                productId: ScenarioGenerator.subscriptionProduct)
            #expect(try await client.extendRenewalDatesForAllActiveSubscribers(mass).requestIdentifier == "mass-1")
            let done = try await client.waitForMassExtension(
                productId: mass.productId, requestIdentifier: "mass-1", interval: .milliseconds(100))
            // The chosen subscription already used its two extensions this year: it is the one failure.
            #expect(done.complete == true && done.succeededCount == Int64(active.count - 1) && done.failedCount == 1)
            do {
                _ = try await client.massExtensionStatus(productId: mass.productId, requestIdentifier: "unknown")
                Issue.record("an unknown extension request is 404")
            } catch let error as AppStoreAPIError {
                #expect(error.errorCode == 4_040_009)
            }
        }
    }
}
