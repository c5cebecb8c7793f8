/// The renewal terms of a subscription with a commitment.
///
/// [RenewalCommitmentInfo](https://developer.apple.com/documentation/appstoreserverapi/renewalcommitmentinfo)
public struct RenewalCommitmentInfo: Codable, Hashable, Sendable {
    /// The product the commitment renews to.
    public var commitmentAutoRenewProductId: String?

    /// Whether the commitment renews. Values this version does not know are kept in ``rawCommitmentAutoRenewStatus``.
    public var commitmentAutoRenewStatus: AutoRenewStatus? {
        get { self.rawCommitmentAutoRenewStatus.flatMap(AutoRenewStatus.init(rawValue:)) }
        set { self.rawCommitmentAutoRenewStatus = newValue?.rawValue }
    }
    /// The raw value of ``commitmentAutoRenewStatus``, exactly as signed.
    public var rawCommitmentAutoRenewStatus: Int32?

    /// How the renewed commitment is billed. Values this version does not know are kept in ``rawCommitmentRenewalBillingPlanType``.
    public var commitmentRenewalBillingPlanType: BillingPlanType? {
        get { self.rawCommitmentRenewalBillingPlanType.flatMap(BillingPlanType.init(rawValue:)) }
        set { self.rawCommitmentRenewalBillingPlanType = newValue?.rawValue }
    }
    /// The raw value of ``commitmentRenewalBillingPlanType``, exactly as signed.
    public var rawCommitmentRenewalBillingPlanType: String?

    /// When the commitment renews.
    public var commitmentRenewalDate: Timestamp?

    /// The renewal price in milliunits.
    public var commitmentRenewalPrice: Int64?

    /// Creates an empty value; set the fields you need.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case commitmentAutoRenewProductId
        case rawCommitmentAutoRenewStatus = "commitmentAutoRenewStatus"
        case rawCommitmentRenewalBillingPlanType = "commitmentRenewalBillingPlanType"
        case commitmentRenewalDate
        case commitmentRenewalPrice
    }
}
