import AppStoreModels
import Foundation

// MARK: - Purchases with a promotional offer the team's server signs

/// A lapsed subscriber whom the app shows a promotional offer: the app asks the team's server (customer-api) for the
/// signature, then buys through StoreKit (the sim's `/sim/storekit/purchases`), which checks the signature as the App
/// Store does. Only a valid signature makes the purchase, its SUBSCRIBED/RESUBSCRIBE notification and the
/// entitlement the scenario expects.
@_spi(Testing) public struct OfferPurchase: Codable, Hashable, Sendable {
    @_spi(Testing) public var environment: Environment
    @_spi(Testing) public var appUserId: String
    @_spi(Testing) public var originalTransactionId: String
    @_spi(Testing) public var productId: String
    @_spi(Testing) public var offerIdentifier: String
    /// `V2` (the JWS) or `V1` (StoreKit's original signature): the run asks for both.
    var signatureVersion: String
    /// The transaction the purchase makes and the notification announcing it.
    @_spi(Testing) public var transactionId: String
    @_spi(Testing) public var notificationUUID: String
}

extension Scenario {
    /// The offer App Store Connect would hold for the scenario's subscription product.
    static let promotionalOfferIdentifier = "COMEBACK_50"
    /// The win-back offer Apple lists in a lapsed subscriber's renewal info.
    static let winBackOfferIdentifier = "WINBACK_1W"

    /// Chooses a `share` of the app's users whose subscription ended on its own (expired, never refunded, one product)
    /// to come back with a promotional offer: their expected entitlement becomes active, and the purchase waits for a
    /// valid signature at run time. Seeded.
    mutating func addOfferPurchases(share: Double, seed: UInt64) {
        guard share > 0 else { return }
        var random = SimRandom(seed: seed ^ 0x0FFE_2C0D)
        let refundRequested = Set(self.openRefundRequests)
        for original in self.purchases.keys.sorted() {
            guard let purchase = self.purchases[original], purchase.customer.hasPrefix("app-user-"),
                purchase.productType == .autoRenewableSubscription, purchase.status == .expired,
                Set(purchase.transactions.map(\.productId)).count == 1,
                purchase.transactions.allSatisfy({ $0.revocationDate == nil && $0.inAppOwnershipType != .familyShared }
                ),
                !purchase.transactions.contains(where: { refundRequested.contains($0.transactionId ?? "") }),
                let index = self.expected.firstIndex(where: {
                    $0.environment == purchase.environment.rawValue && $0.customer == purchase.customer
                        && $0.originalTransactionId == original
                }),
                !self.expected[index].active, !self.expected[index].revoked,
                Double.random(in: 0..<1, using: &random) < share
            else { continue }
            self.expected[index].active = true
            // Apple lists a win-back offer in the lapsed subscriber's renewal info (the EXPIRED notification's).
            for position in self.notifications.indices
            where self.notifications[position].type == "EXPIRED"
                && self.notifications[position].transaction?.originalTransactionId == original
            {
                self.notifications[position].renewal?.eligibleWinBackOfferIds = [Self.winBackOfferIdentifier]
            }
            let number = self.offerPurchases.count
            self.offerPurchases.append(
                OfferPurchase(
                    environment: purchase.environment, appUserId: purchase.customer, originalTransactionId: original,
                    productId: purchase.productId, offerIdentifier: Self.promotionalOfferIdentifier,
                    signatureVersion: number % 2 == 0 ? "V2" : "V1", transactionId: original + "90",
                    notificationUUID: ScenarioGenerator.uuid("offer-\(purchase.environment.rawValue)", number)))
        }
    }
}

// MARK: - The purchase, made when StoreKit accepts the offer

extension SimPurchase {
    /// The subscription after buying `offer` at `now` (epoch ms): a new period of the product at the promotional price,
    /// auto-renewing, active; and the SUBSCRIBED/RESUBSCRIBE notification Apple sends for an offer on an inactive
    /// subscription (since 2024-01-23).
    func buying(_ offer: OfferPurchase, now: Int64) -> (SimPurchase, SimNotification) {
        var bought = self
        var transaction = self.transactions.last!
        transaction.transactionId = offer.transactionId
        transaction.webOrderLineItemId = offer.transactionId + "1"
        transaction.purchaseDate = Timestamp(millisecondsSince1970: now)
        transaction.expiresDate = Timestamp(millisecondsSince1970: now + ScenarioGenerator.period)
        transaction.signedDate = Timestamp(millisecondsSince1970: now)
        transaction.rawOfferType = OfferType.promotionalOffer.rawValue
        transaction.offerIdentifier = offer.offerIdentifier
        transaction.rawOfferDiscountType = OfferDiscountType.payAsYouGo.rawValue
        transaction.offerPeriod = "P1W"
        transaction.rawTransactionReason = TransactionReason.purchase.rawValue
        transaction.revocationDate = nil
        transaction.rawRevocationReason = nil
        bought.transactions.append(transaction)
        var renewal = self.renewal ?? JWSRenewalInfoDecodedPayload()
        renewal.originalTransactionId = self.originalTransactionId
        renewal.productId = self.productId
        renewal.autoRenewProductId = self.productId
        renewal.rawAutoRenewStatus = AutoRenewStatus.on.rawValue
        renewal.rawExpirationIntent = nil
        renewal.isInBillingRetryPeriod = false
        renewal.gracePeriodExpiresDate = nil
        renewal.eligibleWinBackOfferIds = nil
        renewal.renewalDate = transaction.expiresDate
        renewal.recentSubscriptionStartDate = transaction.purchaseDate
        renewal.signedDate = Timestamp(millisecondsSince1970: now)
        bought.renewal = renewal
        bought.status = .active
        let notification = SimNotification(
            uuid: offer.notificationUUID, type: "SUBSCRIBED", subtype: "RESUBSCRIBE", signedDate: now,
            transaction: transaction, renewal: renewal, status: .active, customer: offer.appUserId,
            environment: offer.environment)
        return (bought, notification)
    }
}
