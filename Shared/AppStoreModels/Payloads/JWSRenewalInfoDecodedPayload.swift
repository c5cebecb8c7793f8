/// Decoded, signed subscription renewal information.
///
/// [JWSRenewalInfoDecodedPayload](https://developer.apple.com/documentation/appstoreserverapi/jwsrenewalinfodecodedpayload)
public struct JWSRenewalInfoDecodedPayload: Codable, Hashable, Sendable {
    /// Why the subscription expired. Values this version does not know are kept in ``rawExpirationIntent``.
    public var expirationIntent: ExpirationIntent? {
        get { self.rawExpirationIntent.flatMap(ExpirationIntent.init(rawValue:)) }
        set { self.rawExpirationIntent = newValue?.rawValue }
    }
    /// The raw value of ``expirationIntent``, exactly as signed.
    public var rawExpirationIntent: Int32?

    /// The original transaction identifier of the subscription.
    public var originalTransactionId: String?

    /// The product that renews at the next billing period.
    public var autoRenewProductId: String?

    /// The current product.
    public var productId: String?

    /// Whether the subscription renews automatically. Values this version does not know are kept in ``rawAutoRenewStatus``.
    public var autoRenewStatus: AutoRenewStatus? {
        get { self.rawAutoRenewStatus.flatMap(AutoRenewStatus.init(rawValue:)) }
        set { self.rawAutoRenewStatus = newValue?.rawValue }
    }
    /// The raw value of ``autoRenewStatus``, exactly as signed.
    public var rawAutoRenewStatus: Int32?

    /// Whether the App Store is trying to renew an expired subscription.
    public var isInBillingRetryPeriod: Bool?

    /// Whether the customer consented to a price increase. Values this version does not know are kept in ``rawPriceIncreaseStatus``.
    public var priceIncreaseStatus: PriceIncreaseStatus? {
        get { self.rawPriceIncreaseStatus.flatMap(PriceIncreaseStatus.init(rawValue:)) }
        set { self.rawPriceIncreaseStatus = newValue?.rawValue }
    }
    /// The raw value of ``priceIncreaseStatus``, exactly as signed.
    public var rawPriceIncreaseStatus: Int32?

    /// When the billing grace period ends.
    public var gracePeriodExpiresDate: Timestamp?

    /// The type of offer for the next renewal. Values this version does not know are kept in ``rawOfferType``.
    public var offerType: OfferType? {
        get { self.rawOfferType.flatMap(OfferType.init(rawValue:)) }
        set { self.rawOfferType = newValue?.rawValue }
    }
    /// The raw value of ``offerType``, exactly as signed.
    public var rawOfferType: Int32?

    /// The offer for the next renewal.
    public var offerIdentifier: String?

    /// When the App Store signed this renewal information.
    public var signedDate: Timestamp?

    /// The server environment. Values this version does not know are kept in ``rawEnvironment``.
    public var environment: Environment? {
        get { self.rawEnvironment.flatMap(Environment.init(rawValue:)) }
        set { self.rawEnvironment = newValue?.rawValue }
    }
    /// The raw value of ``environment``, exactly as signed.
    public var rawEnvironment: String?

    /// The start of the most recent run of uninterrupted subscription periods.
    public var recentSubscriptionStartDate: Timestamp?

    /// When the subscription renews next.
    public var renewalDate: Timestamp?

    /// The currency of the renewal price.
    public var currency: String?

    /// The renewal price in milliunits.
    public var renewalPrice: Int64?

    /// The payment mode of the renewal offer. Values this version does not know are kept in ``rawOfferDiscountType``.
    public var offerDiscountType: OfferDiscountType? {
        get { self.rawOfferDiscountType.flatMap(OfferDiscountType.init(rawValue:)) }
        set { self.rawOfferDiscountType = newValue?.rawValue }
    }
    /// The raw value of ``offerDiscountType``, exactly as signed.
    public var rawOfferDiscountType: String?

    /// Win-back offers the customer is eligible for.
    public var eligibleWinBackOfferIds: [String]?

    /// The UUID the app associated with the customer.
    public var appAccountToken: String?

    /// The app download's unique identifier.
    public var appTransactionId: String?

    /// The duration of the renewal offer, ISO 8601.
    public var offerPeriod: String?

    /// Advanced Commerce API renewal details, kept exactly as signed.
    public var advancedCommerceInfo: JSONValue?

    /// The renewal terms of a commitment plan.
    public var commitmentInfo: RenewalCommitmentInfo?

    /// How the next renewal is billed. Values this version does not know are kept in ``rawRenewalBillingPlanType``.
    public var renewalBillingPlanType: BillingPlanType? {
        get { self.rawRenewalBillingPlanType.flatMap(BillingPlanType.init(rawValue:)) }
        set { self.rawRenewalBillingPlanType = newValue?.rawValue }
    }
    /// The raw value of ``renewalBillingPlanType``, exactly as signed.
    public var rawRenewalBillingPlanType: String?

    /// Creates an empty value; set the fields you need.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case rawExpirationIntent = "expirationIntent"
        case originalTransactionId
        case autoRenewProductId
        case productId
        case rawAutoRenewStatus = "autoRenewStatus"
        case isInBillingRetryPeriod
        case rawPriceIncreaseStatus = "priceIncreaseStatus"
        case gracePeriodExpiresDate
        case rawOfferType = "offerType"
        case offerIdentifier
        case signedDate
        case rawEnvironment = "environment"
        case recentSubscriptionStartDate
        case renewalDate
        case currency
        case renewalPrice
        case rawOfferDiscountType = "offerDiscountType"
        case eligibleWinBackOfferIds
        case appAccountToken
        case appTransactionId
        case offerPeriod
        case advancedCommerceInfo
        case commitmentInfo
        case rawRenewalBillingPlanType = "renewalBillingPlanType"
    }
}
