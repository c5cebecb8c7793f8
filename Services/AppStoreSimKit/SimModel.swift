import AppStoreModels
import Foundation

// MARK: - What the stand-in knows: Apple's side of every purchase

/// One notification the App Store sends, before signing.
@_spi(Testing) public struct SimNotification: Sendable {
    @_spi(Testing) public var uuid: String
    @_spi(Testing) public var type: String
    var subtype: String?
    /// When the App Store signed it (epoch ms).
    var signedDate: Int64
    @_spi(Testing) public var transaction: JWSTransactionDecodedPayload?
    var renewal: JWSRenewalInfoDecodedPayload?
    /// `data.status`, when the notification carries it.
    var status: Status?
    /// Which container the payload uses.
    var container: Container = .data
    /// The customer this notification concerns (nil for app-level notifications).
    @_spi(Testing) public var customer: String?
    /// The environment it is sent from (Sandbox and Production traffic share one run).
    @_spi(Testing) public var environment: Environment = .production

    /// The counts a RENEWAL_EXTENSION/SUMMARY carries (nil: the scenario's fixed example).
    var summary: Summary?

    enum Container: Sendable { case data, summary, externalPurchaseToken, appData }
}

/// A subscription or purchase as the App Store holds it now: its transactions (newest last), renewal info and status.
@_spi(Testing) public struct SimPurchase: Sendable {
    @_spi(Testing) public var environment: Environment = .production
    @_spi(Testing) public var originalTransactionId: String
    @_spi(Testing) public var customer: String
    @_spi(Testing) public var productId: String
    @_spi(Testing) public var productType: ProductType
    @_spi(Testing) public var transactions: [JWSTransactionDecodedPayload]
    @_spi(Testing) public var renewal: JWSRenewalInfoDecodedPayload?
    /// Auto-renewables only: the current status.
    @_spi(Testing) public var status: Status?
    /// The subscription the App Store migrated this one to (Advanced Commerce API), if any.
    @_spi(Testing) public var migratedTo: String?
}

/// The final entitlement a customer must have for a product after the run (Apple's truth).
@_spi(Testing) public struct ExpectedEntitlement: Codable, Hashable, Sendable, Comparable {
    @_spi(Testing) public var environment: String = Environment.production.rawValue
    @_spi(Testing) public var customer: String
    @_spi(Testing) public var productId: String
    @_spi(Testing) public var originalTransactionId: String
    @_spi(Testing) public var active: Bool
    @_spi(Testing) public var revoked: Bool

    @_spi(Testing) public static func < (a: Self, b: Self) -> Bool {
        (a.environment, a.customer, a.productId) < (b.environment, b.customer, b.productId)
    }
}

/// A generated run: every notification in signing order, every purchase's final state, and the expected
/// entitlements (consumables grant none).
@_spi(Testing) public struct Scenario: Sendable {
    @_spi(Testing) public var notifications: [SimNotification]
    @_spi(Testing) public var purchases: [String: SimPurchase]
    @_spi(Testing) public var expected: [ExpectedEntitlement]

    /// Which life cycles the run holds, by name, for the summary line.
    @_spi(Testing) public var lifeCycles: [String: Int]
    /// Purchases the app hands to the team's server (customer-api) right after buying, keyed by app user ids.
    @_spi(Testing) public var appPosts: [AppPost] = []
    /// Notifications the App Store lost for good: never sent, not in notification history.
    @_spi(Testing) public var lost: [SimNotification] = []
    /// Transactions with a refund request open now (a fresh CONSUMPTION_REQUEST whose answer window is open).
    @_spi(Testing) public var openRefundRequests: [String] = []
    /// Lapsed subscribers who come back with a promotional offer the team's server signs (made at run time).
    @_spi(Testing) public var offerPurchases: [OfferPurchase] = []
}

/// A purchase as the app posts it to customer-api: StoreKit 2's signed transaction of the purchase moment,
/// for the app's own user id (these customers have no appAccountToken), with the device's proof that it is the
/// buyer's: `AppTransaction.shared` as StoreKit signs it at the post, and the device's verification id.
@_spi(Testing) public struct AppPost: Sendable {
    @_spi(Testing) public var appUserId: String
    @_spi(Testing) public var environment: Environment
    @_spi(Testing) public var transaction: JWSTransactionDecodedPayload
    /// The buyer's device's `AppStore.deviceVerificationID`.
    @_spi(Testing) public var deviceVerificationId: String
    /// When the App Store signed it: the purchase (epoch ms).
    var signedAt: Int64
}

/// A small deterministic random generator (SplitMix64), so a seed reproduces a run.
struct SimRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64
    init(seed: UInt64) { self.state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

// MARK: - Completeness facts

/// What a scenario's notifications (and the app's posts) carry, for the completeness checks of the local run
/// and the end-to-end test: every transaction (per environment) with whether its final version is revoked, and the
/// notifications that must each yield exactly one revocation event.
@_spi(Testing) public struct ScenarioFacts: Codable, Sendable {
    @_spi(Testing) public struct CarriedTransaction: Codable, Hashable, Sendable {
        @_spi(Testing) public var environment: String
        @_spi(Testing) public var transactionId: String
        @_spi(Testing) public var revoked: Bool
    }

    @_spi(Testing) public var transactions: [CarriedTransaction]
    /// UUIDs of the REFUND, REFUND_REVERSED, REVOKE and REFUND_DECLINED notifications.
    @_spi(Testing) public var refundLike: [String]

    static let refundLikeTypes: Set<String> = ["REFUND", "REFUND_REVERSED", "REVOKE", "REFUND_DECLINED"]
}

extension Scenario {
    /// The completeness facts of this scenario, from the sim's own final state of each purchase.
    @_spi(Testing) public var facts: ScenarioFacts {
        var carried: Set<ScenarioFacts.CarriedTransaction> = []
        let sent =
            self.notifications.map { ($0.environment, $0.transaction) }
            + self.appPosts.map { ($0.environment, Optional($0.transaction)) }
        for (environment, transaction) in sent {
            guard let id = transaction?.transactionId, let original = transaction?.originalTransactionId,
                let final = self.purchases[original]?.transactions.first(where: { $0.transactionId == id })
            else { continue }
            carried.insert(
                .init(environment: environment.rawValue, transactionId: id, revoked: final.revocationDate != nil))
        }
        return ScenarioFacts(
            transactions: carried.sorted { ($0.environment, $0.transactionId) < ($1.environment, $1.transactionId) },
            refundLike: self.notifications.filter { ScenarioFacts.refundLikeTypes.contains($0.type) }.map(\.uuid))
    }
}
