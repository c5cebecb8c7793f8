/// A decoded, signed transaction.
///
/// [JWSTransactionDecodedPayload](https://developer.apple.com/documentation/appstoreserverapi/jwstransactiondecodedpayload)
public struct JWSTransactionDecodedPayload: Codable, Hashable, Sendable {
    /// The transaction identifier of the original purchase; the subscription's stable identity.
    public var originalTransactionId: String?

    /// The identifier of this transaction.
    public var transactionId: String?

    /// The identifier of subscription purchase events across devices.
    public var webOrderLineItemId: String?

    /// The app's bundle identifier.
    public var bundleId: String?

    /// The product identifier.
    public var productId: String?

    /// The subscription group the product belongs to.
    public var subscriptionGroupIdentifier: String?

    /// When the App Store charged the customer (or the renewal date).
    public var purchaseDate: Timestamp?

    /// The purchase date of the original transaction.
    public var originalPurchaseDate: Timestamp?

    /// When the subscription expires or renews.
    public var expiresDate: Timestamp?

    /// The number of consumable products purchased.
    public var quantity: Int32?

    /// The kind of in-app purchase. Values this version does not know are kept in ``rawType``.
    public var type: ProductType? {
        get { self.rawType.flatMap(ProductType.init(rawValue:)) }
        set { self.rawType = newValue?.rawValue }
    }
    /// The raw value of ``type``, exactly as signed.
    public var rawType: String?

    /// The UUID the app associated with the customer, when it set one. Kept as sent: it is not always a valid UUID.
    public var appAccountToken: String?

    /// Whether the customer purchased, was family-shared or was assigned the product. Values this version does not know are kept in ``rawInAppOwnershipType``.
    public var inAppOwnershipType: InAppOwnershipType? {
        get { self.rawInAppOwnershipType.flatMap(InAppOwnershipType.init(rawValue:)) }
        set { self.rawInAppOwnershipType = newValue?.rawValue }
    }
    /// The raw value of ``inAppOwnershipType``, exactly as signed.
    public var rawInAppOwnershipType: String?

    /// When the App Store signed this transaction.
    public var signedDate: Timestamp?

    /// Why the transaction was refunded or revoked. Values this version does not know are kept in ``rawRevocationReason``.
    public var revocationReason: RevocationReason? {
        get { self.rawRevocationReason.flatMap(RevocationReason.init(rawValue:)) }
        set { self.rawRevocationReason = newValue?.rawValue }
    }
    /// The raw value of ``revocationReason``, exactly as signed.
    public var rawRevocationReason: Int32?

    /// When the transaction was refunded or revoked.
    public var revocationDate: Timestamp?

    /// Whether the customer upgraded to another subscription.
    public var isUpgraded: Bool?

    /// The type of offer applied. Values this version does not know are kept in ``rawOfferType``.
    public var offerType: OfferType? {
        get { self.rawOfferType.flatMap(OfferType.init(rawValue:)) }
        set { self.rawOfferType = newValue?.rawValue }
    }
    /// The raw value of ``offerType``, exactly as signed.
    public var rawOfferType: Int32?

    /// The identifier of the offer applied.
    public var offerIdentifier: String?

    /// The server environment. Values this version does not know are kept in ``rawEnvironment``.
    public var environment: Environment? {
        get { self.rawEnvironment.flatMap(Environment.init(rawValue:)) }
        set { self.rawEnvironment = newValue?.rawValue }
    }
    /// The raw value of ``environment``, exactly as signed.
    public var rawEnvironment: String?

    /// The three-letter storefront code.
    public var storefront: String?

    /// The App Store storefront identifier.
    public var storefrontId: String?

    /// Whether this is a purchase or a renewal. Values this version does not know are kept in ``rawTransactionReason``.
    public var transactionReason: TransactionReason? {
        get { self.rawTransactionReason.flatMap(TransactionReason.init(rawValue:)) }
        set { self.rawTransactionReason = newValue?.rawValue }
    }
    /// The raw value of ``transactionReason``, exactly as signed.
    public var rawTransactionReason: String?

    /// The ISO 4217 currency of the price.
    public var currency: String?

    /// The price in milliunits of the currency.
    public var price: Int64?

    /// The payment mode of the offer applied. Values this version does not know are kept in ``rawOfferDiscountType``.
    public var offerDiscountType: OfferDiscountType? {
        get { self.rawOfferDiscountType.flatMap(OfferDiscountType.init(rawValue:)) }
        set { self.rawOfferDiscountType = newValue?.rawValue }
    }
    /// The raw value of ``offerDiscountType``, exactly as signed.
    public var rawOfferDiscountType: String?

    /// The app download's unique identifier.
    public var appTransactionId: String?

    /// The duration of the offer applied, ISO 8601.
    public var offerPeriod: String?

    /// How the transaction was revoked (since 2025-12-10). Values this version does not know are kept in ``rawRevocationType``.
    public var revocationType: RevocationType? {
        get { self.rawRevocationType.flatMap(RevocationType.init(rawValue:)) }
        set { self.rawRevocationType = newValue?.rawValue }
    }
    /// The raw value of ``revocationType``, exactly as signed.
    public var rawRevocationType: String?

    /// The refunded share in milliunits for a prorated refund; absent when a refund is reversed.
    public var revocationPercentage: Int32?

    /// Advanced Commerce API details, kept exactly as signed.
    public var advancedCommerceInfo: JSONValue?

    /// How the subscription is billed (since 2026-04-27). Values this version does not know are kept in ``rawBillingPlanType``.
    public var billingPlanType: BillingPlanType? {
        get { self.rawBillingPlanType.flatMap(BillingPlanType.init(rawValue:)) }
        set { self.rawBillingPlanType = newValue?.rawValue }
    }
    /// The raw value of ``billingPlanType``, exactly as signed.
    public var rawBillingPlanType: String?

    /// The commitment of a monthly plan with a 12-month commitment.
    public var commitmentInfo: TransactionCommitmentInfo?

    /// The original transaction this one continues (since 2025-03-24).
    public var previousOriginalTransactionId: String?

    /// StoreKit 2 on the device: base64 of SHA-384 over the lowercased ``deviceVerificationNonce`` followed by the
    /// lowercased `AppStore.deviceVerificationID` of the device the transaction was handed to. The server API's
    /// answers do not carry it.
    public var deviceVerification: String?

    /// The UUID the ``deviceVerification`` hash starts with.
    public var deviceVerificationNonce: String?

    /// Creates an empty value; set the fields you need.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case originalTransactionId
        case transactionId
        case webOrderLineItemId
        case bundleId
        case productId
        case subscriptionGroupIdentifier
        case purchaseDate
        case originalPurchaseDate
        case expiresDate
        case quantity
        case rawType = "type"
        case appAccountToken
        case rawInAppOwnershipType = "inAppOwnershipType"
        case signedDate
        case rawRevocationReason = "revocationReason"
        case revocationDate
        case isUpgraded
        case rawOfferType = "offerType"
        case offerIdentifier
        case rawEnvironment = "environment"
        case storefront
        case storefrontId
        case rawTransactionReason = "transactionReason"
        case currency
        case price
        case rawOfferDiscountType = "offerDiscountType"
        case appTransactionId
        case offerPeriod
        case rawRevocationType = "revocationType"
        case revocationPercentage
        case advancedCommerceInfo
        case rawBillingPlanType = "billingPlanType"
        case commitmentInfo
        case previousOriginalTransactionId
        case deviceVerification
        case deviceVerificationNonce
    }
}
