import AppStoreAPI
import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import Foundation
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// The App Store Server API's newest parts against the sim, with Apple's rules: Get App Transaction Info (1.17) by any
/// transaction id of the customer or by the appTransactionId, verified, 4040019 for an unknown id; and assigned
/// transactions (1.22), which take no consumption information (4000227) and no renewal extension (4030028).
@Suite(.tags(.integration), .notInUnitRuns) struct NewestAPIAgainstSimTests {
    @Test func appTransactionInfoByAnyTransactionIdOrItsOwnId() async throws {
        try await SimHarness.with(customers: 40, seed: 17) { sim in
            let client = try sim.client(retry: .none)
            let subscription = try #require(
                sim.simulator.scenario.purchases.values.sorted { $0.originalTransactionId < $1.originalTransactionId }
                    .first { $0.transactions.count >= 2 })
            let byRenewal = try await client.appTransactionInfo(subscription.transactions[1].transactionId!)
            #expect(byRenewal.environment == .production)
            #expect(byRenewal.appTransaction.bundleId == sim.app.bundleId)
            #expect(byRenewal.appTransaction.appAppleId == sim.app.appAppleId)
            let appTransactionId = try #require(byRenewal.appTransaction.appTransactionId)
            let byOwnId = try await client.appTransactionInfo(appTransactionId)
            #expect(byOwnId.appTransaction.appTransactionId == appTransactionId)
            #expect(
                byOwnId.appTransaction.originalPurchaseDate == byRenewal.appTransaction.originalPurchaseDate,
                "one customer, one app transaction")
            do {
                _ = try await client.appTransactionInfo("2999999999999999")
                Issue.record("an unknown id has no app transaction")
            } catch let error as AppStoreAPIError {
                #expect(error.errorCode == 4_040_019)
            }
        }
    }

    /// Every kind of purchase (subscription, non-consumable, consumable) in both environments has an app transaction
    /// that Get App Transaction Info finds again by its own appTransactionId (the sim once read every id back as a
    /// subscription's, so one-time and Sandbox purchases got 4040019).
    @Test(arguments: [AppStoreModels.Environment.production, .sandbox])
    func appTransactionOfEveryKindOfPurchaseIsFoundByItsOwnId(_ environment: AppStoreModels.Environment)
        async throws
    {
        try await SimHarness.with(customers: 60, seed: 19, environment: environment) { sim in
            let client = try sim.client(retry: .none).scoped(bundleID: sim.app.bundleId, environment: environment)
            let purchases = sim.simulator.scenario.purchases.values.sorted {
                $0.originalTransactionId < $1.originalTransactionId
            }
            var kinds: Set<Character> = []
            for purchase in purchases {
                // The kind's digit leads the last 13 digits (Sandbox ids carry a 10¹³ offset before it).
                let kind = purchase.originalTransactionId.suffix(13).first!
                guard !kinds.contains(kind) else { continue }
                kinds.insert(kind)
                let byOriginal = try await client.appTransactionInfo(purchase.originalTransactionId)
                #expect(byOriginal.environment == environment)
                let appTransactionId = try #require(byOriginal.appTransaction.appTransactionId)
                let byOwnId = try await client.appTransactionInfo(appTransactionId)
                #expect(
                    byOwnId.appTransaction.appTransactionId == appTransactionId,
                    "\(environment) \(purchase.originalTransactionId): found again by \(appTransactionId)")
            }
            #expect(kinds.count == 3, "subscriptions, non-consumables and consumables in \(environment): \(kinds)")
        }
    }

    @Test func assignedTransactionsTakeNoConsumptionAnswerAndNoExtension() async throws {
        try await SimHarness.with(customers: 300, seed: 18) { sim in
            let client = try sim.client(retry: .none)
            let assigned = try #require(
                sim.simulator.scenario.purchases.values.sorted { $0.originalTransactionId < $1.originalTransactionId }
                    .first { $0.transactions.first?.inAppOwnershipType == .assigned && $0.status == .active },
                "the scenario has active assigned subscriptions (one in sixteen)")
            let consumption = ConsumptionRequest(
                customerConsented: true, deliveryStatus: "DELIVERED", refundPreference: "DECLINE",
                sampleContentProvided: false)
            do {
                try await client.sendConsumptionInformation(assigned.transactions[0].transactionId!, consumption)
                Issue.record("Apple takes no consumption information for an assigned transaction")
            } catch let error as AppStoreAPIError {
                #expect(error.errorCode == APIErrorCode.assignedTransactionNotSupported && !error.isRetryable)
            }
            do {
                _ = try await client.extendRenewalDate(
                    assigned.originalTransactionId,
                    ExtendRenewalDateRequest(extendByDays: 7, extendReasonCode: 1, requestIdentifier: UUID().uuidString)
                )
                Issue.record("Apple extends no assigned subscription")
            } catch let error as AppStoreAPIError {
                #expect(error.errorCode == APIErrorCode.assignedExtensionIneligible && !error.isRetryable)
            }
            let verified = try await client.transactionInfo(assigned.transactions[0].transactionId!)
            #expect(verified.transaction.inAppOwnershipType == .assigned, "the ownership Apple signs")
        }
    }
}
