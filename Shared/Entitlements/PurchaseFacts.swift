import AppStoreModels
import Foundation
import JWSVerification

/// The description of the purchase an event is about, as schema version 2 carries it on every event (flat,
/// beside the version 1 fields): the identity (environment, app), the transaction, the subscription's renewal
/// state and the price, all from what Apple signed. Fields Apple did not send are left out of the JSON.
public struct PurchaseFacts: Codable, Hashable, Sendable {
    /// `Production`, `Sandbox`, `Xcode` or `LocalTesting`: consumers must keep them apart.
    public var environment: String
    public var bundleId: String
    public var appAppleId: Int64?
    /// Always `APP_STORE` (the name RevenueCat's `store` uses).
    public var store = "APP_STORE"
    /// The entitlement the product grants (see ``EntitlementCatalog``).
    public var entitlementId: String?
    public var transactionId: String?
    public var originalTransactionId: String?
    /// `Auto-Renewable Subscription`, `Non-Consumable`, `Consumable` or `Non-Renewing Subscription`.
    public var productType: String?
    public var purchaseDate: Int64?
    public var expirationDate: Int64?
    public var gracePeriodExpiresDate: Int64?
    public var isInGracePeriod: Bool?
    public var isInBillingRetry: Bool?
    /// The subscription status as Apple reported it with the notification (1 active … 5 revoked).
    public var subscriptionStatus: Int32?
    /// 1 on, 0 off.
    public var autoRenewStatus: Int32?
    public var autoRenewProductId: String?
    public var expirationIntent: Int32?
    /// `TRIAL`, `INTRO`, `PROMOTIONAL`, `OFFER_CODE`, `WIN_BACK` or `NORMAL` (subscriptions only).
    public var periodType: String?
    public var offerIdentifier: String?
    /// The price as an exact decimal string (Apple signs milliunits: 4990 → "4.99").
    public var price: String?
    public var currency: String?
    public var storefront: String?
    public var quantity: Int32?
    /// `PURCHASED`, `FAMILY_SHARED`, `ASSIGNED`.
    public var ownershipType: String?
    public var subscriptionGroupIdentifier: String?
    /// How the transaction is billed (`BILLED_UPFRONT`, `BILLED_MONTHLY`, … as Apple signs it).
    public var billingPlanType: String?
    /// How the next renewal is billed (renewal info's `renewalBillingPlanType`).
    public var renewalBillingPlanType: String?
    /// The next renewal's price as an exact decimal string (renewal info's `renewalPrice`).
    public var renewalPrice: String?
    /// `FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT`, `ONE_TIME` (the transaction's offer).
    public var offerDiscountType: String?
    /// A plan with a commitment: this period's place in it and, from renewal info, how it renews.
    public var commitmentInfo: CommitmentFacts?
    /// True when the notification arrived after a newer one for the same subscription: the fact is new, the
    /// state it describes is not the current one (the entitlement did not move backwards).
    public var outOfOrder = false

    public init(environment: String, bundleId: String) {
        self.environment = environment
        self.bundleId = bundleId
    }

    /// The facts of a verified notification (or a status snapshot in notification shape).
    static func of(_ notification: VerifiedNotification, catalog: EntitlementCatalog, outOfOrder: Bool) -> PurchaseFacts
    {
        let payload = notification.payload
        let transaction = notification.transaction
        let renewal = notification.renewalInfo
        var facts = PurchaseFacts(
            environment: payload.rawEnvironment ?? transaction?.rawEnvironment ?? "unknown",
            bundleId: payload.bundleId ?? transaction?.bundleId ?? "unknown")
        facts.appAppleId = payload.appAppleId
        facts.outOfOrder = outOfOrder
        guard let transaction else { return facts }
        let signedDate = payload.signedDate?.millisecondsSince1970 ?? 0
        facts.entitlementId = transaction.productId.map(catalog.entitlement(of:))
        facts.transactionId = transaction.transactionId
        facts.originalTransactionId = transaction.originalTransactionId
        facts.productType = transaction.rawType
        facts.purchaseDate = transaction.purchaseDate?.millisecondsSince1970
        facts.expirationDate = transaction.expiresDate?.millisecondsSince1970
        facts.offerIdentifier = transaction.offerIdentifier
        facts.price = transaction.price.map(Self.decimal(milliunits:))
        facts.currency = transaction.currency
        facts.storefront = transaction.storefront
        facts.quantity = transaction.quantity
        facts.ownershipType = transaction.rawInAppOwnershipType
        facts.subscriptionGroupIdentifier = transaction.subscriptionGroupIdentifier
        facts.billingPlanType = transaction.rawBillingPlanType
        facts.offerDiscountType = transaction.rawOfferDiscountType
        facts.commitmentInfo = CommitmentFacts(transaction.commitmentInfo, renewal?.commitmentInfo)
        guard transaction.type == .autoRenewableSubscription else { return facts }
        facts.subscriptionStatus = payload.data?.rawStatus
        facts.periodType = Self.periodType(transaction)
        if let renewal {
            facts.autoRenewStatus = renewal.rawAutoRenewStatus
            facts.autoRenewProductId = renewal.autoRenewProductId
            facts.expirationIntent = renewal.rawExpirationIntent
            facts.isInBillingRetry = renewal.isInBillingRetryPeriod
            facts.gracePeriodExpiresDate = renewal.gracePeriodExpiresDate?.millisecondsSince1970
            facts.renewalBillingPlanType = renewal.rawRenewalBillingPlanType
            facts.renewalPrice = renewal.renewalPrice.map(Self.decimal(milliunits:))
        }
        if let status = payload.data?.status {
            facts.isInGracePeriod = status == .billingGracePeriod
        } else if let grace = facts.gracePeriodExpiresDate {
            facts.isInGracePeriod = renewal?.isInBillingRetryPeriod == true && grace > signedDate
        }
        return facts
    }

    /// The kind of period a subscription transaction pays for, from its offer.
    static func periodType(_ transaction: JWSTransactionDecodedPayload) -> String {
        switch transaction.offerType {
        case .introductoryOffer?: transaction.offerDiscountType == .freeTrial ? "TRIAL" : "INTRO"
        case .promotionalOffer?: "PROMOTIONAL"
        case .offerCode?: "OFFER_CODE"
        case .winBackOffer?: "WIN_BACK"
        case nil: transaction.rawOfferType == nil ? "NORMAL" : "OFFER_\(transaction.rawOfferType!)"
        }
    }

    /// The exact decimal of a milliunit amount, without trailing zeros: 4990 → "4.99", 5000 → "5", -250 → "-0.25".
    static func decimal(milliunits: Int64) -> String {
        let sign = milliunits < 0 ? "-" : ""
        let magnitude = milliunits.magnitude
        var fraction = String(magnitude % 1000)
        fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return sign + String(magnitude / 1000) + (fraction.isEmpty ? "" : "." + fraction)
    }
}

/// The commitment of a plan billed in periods (Apple's `commitmentInfo` of the transaction and of the renewal info),
/// flat, with milliunit prices as exact decimal strings.
public struct CommitmentFacts: Codable, Hashable, Sendable {
    public var billingPeriodNumber: Int32?
    public var totalBillingPeriods: Int32?
    public var commitmentExpiresDate: Int64?
    public var commitmentPrice: String?
    public var commitmentAutoRenewProductId: String?
    public var commitmentAutoRenewStatus: Int32?
    public var commitmentRenewalBillingPlanType: String?
    public var commitmentRenewalDate: Int64?
    public var commitmentRenewalPrice: String?

    /// Both commitments merged; nil when Apple sent neither.
    init?(_ transaction: TransactionCommitmentInfo?, _ renewal: RenewalCommitmentInfo?) {
        guard transaction != nil || renewal != nil else { return nil }
        self.billingPeriodNumber = transaction?.billingPeriodNumber
        self.totalBillingPeriods = transaction?.totalBillingPeriods
        self.commitmentExpiresDate = transaction?.commitmentExpiresDate?.millisecondsSince1970
        self.commitmentPrice = transaction?.commitmentPrice.map(PurchaseFacts.decimal(milliunits:))
        self.commitmentAutoRenewProductId = renewal?.commitmentAutoRenewProductId
        self.commitmentAutoRenewStatus = renewal?.rawCommitmentAutoRenewStatus
        self.commitmentRenewalBillingPlanType = renewal?.rawCommitmentRenewalBillingPlanType
        self.commitmentRenewalDate = renewal?.commitmentRenewalDate?.millisecondsSince1970
        self.commitmentRenewalPrice = renewal?.commitmentRenewalPrice.map(PurchaseFacts.decimal(milliunits:))
    }
}
