/// The decoded payload of a signed notification. Exactly one of `data`, `summary`, `externalPurchaseToken` and `appData` is present.
///
/// [ResponseBodyV2DecodedPayload](https://developer.apple.com/documentation/appstoreservernotifications/responsebodyv2decodedpayload)
public struct ResponseBodyV2DecodedPayload: Codable, Hashable, Sendable {
    /// The type of the notification. Values this version does not know are kept in ``rawNotificationType``.
    public var notificationType: NotificationTypeV2? {
        get { self.rawNotificationType.flatMap(NotificationTypeV2.init(rawValue:)) }
        set { self.rawNotificationType = newValue?.rawValue }
    }
    /// The raw value of ``notificationType``, exactly as signed.
    public var rawNotificationType: String?

    /// Details of the notification type, when it has any. Values this version does not know are kept in ``rawSubtype``.
    public var subtype: Subtype? {
        get { self.rawSubtype.flatMap(Subtype.init(rawValue:)) }
        set { self.rawSubtype = newValue?.rawValue }
    }
    /// The raw value of ``subtype``, exactly as signed.
    public var rawSubtype: String?

    /// A unique identifier; retries of one notification keep it.
    public var notificationUUID: String?

    /// App and transaction data, for most notification types.
    public var data: NotificationData?

    /// The result of a mass renewal-date extension (RENEWAL_EXTENSION/SUMMARY).
    public var summary: Summary?

    /// An external purchase token (EXTERNAL_PURCHASE_TOKEN).
    public var externalPurchaseToken: ExternalPurchaseToken?

    /// App-level data (RESCIND_CONSENT).
    public var appData: AppData?

    /// The notification version, "2.0".
    public var version: String?

    /// When the App Store signed the notification.
    public var signedDate: Timestamp?

    /// Creates an empty value; set the fields you need.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case rawNotificationType = "notificationType"
        case rawSubtype = "subtype"
        case notificationUUID
        case data
        case summary
        case externalPurchaseToken
        case appData
        case version
        case signedDate
    }
}
