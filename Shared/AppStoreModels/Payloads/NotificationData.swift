/// The app and transaction data of a notification.
///
/// [NotificationData](https://developer.apple.com/documentation/appstoreservernotifications/data)
public struct NotificationData: Codable, Hashable, Sendable {
    /// The server environment the notification applies to. Values this version does not know are kept in ``rawEnvironment``.
    public var environment: Environment? {
        get { self.rawEnvironment.flatMap(Environment.init(rawValue:)) }
        set { self.rawEnvironment = newValue?.rawValue }
    }
    /// The raw value of ``environment``, exactly as signed.
    public var rawEnvironment: String?

    /// The app's App Store identifier.
    public var appAppleId: Int64?

    /// The app's bundle identifier.
    public var bundleId: String?

    /// The app's build version.
    public var bundleVersion: String?

    /// Transaction information, as a JWS.
    public var signedTransactionInfo: String?

    /// Subscription renewal information, as a JWS.
    public var signedRenewalInfo: String?

    /// The subscription status as of the notification's signedDate (auto-renewables only). Values this version does not know are kept in ``rawStatus``.
    public var status: Status? {
        get { self.rawStatus.flatMap(Status.init(rawValue:)) }
        set { self.rawStatus = newValue?.rawValue }
    }
    /// The raw value of ``status``, exactly as signed.
    public var rawStatus: Int32?

    /// Why the customer asked for a refund (CONSUMPTION_REQUEST). Values this version does not know are kept in ``rawConsumptionRequestReason``.
    public var consumptionRequestReason: ConsumptionRequestReason? {
        get { self.rawConsumptionRequestReason.flatMap(ConsumptionRequestReason.init(rawValue:)) }
        set { self.rawConsumptionRequestReason = newValue?.rawValue }
    }
    /// The raw value of ``consumptionRequestReason``, exactly as signed.
    public var rawConsumptionRequestReason: String?

    /// Creates an empty value; set the fields you need.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case rawEnvironment = "environment"
        case appAppleId
        case bundleId
        case bundleVersion
        case signedTransactionInfo
        case signedRenewalInfo
        case rawStatus = "status"
        case rawConsumptionRequestReason = "consumptionRequestReason"
    }
}
