/// The commitment details of a transaction billed monthly with a commitment.
///
/// [TransactionCommitmentInfo](https://developer.apple.com/documentation/appstoreserverapi/transactioncommitmentinfo)
public struct TransactionCommitmentInfo: Codable, Hashable, Sendable {
    /// Which billing period of the commitment this is.
    public var billingPeriodNumber: Int32?

    /// When the commitment ends.
    public var commitmentExpiresDate: Timestamp?

    /// The price of the whole commitment in milliunits.
    public var commitmentPrice: Int64?

    /// How many billing periods the commitment has.
    public var totalBillingPeriods: Int32?

    /// Creates an empty value; set the fields you need.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case billingPeriodNumber
        case commitmentExpiresDate
        case commitmentPrice
        case totalBillingPeriods
    }
}
