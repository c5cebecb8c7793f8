/// A decoded, signed app transaction: the customer's download of the app.
///
/// [AppTransaction](https://developer.apple.com/documentation/storekit/apptransaction)
public struct AppTransaction: Codable, Hashable, Sendable {
    /// The server environment that signed the app transaction. Values this version does not know are kept in ``rawReceiptType``.
    public var receiptType: Environment? {
        get { self.rawReceiptType.flatMap(Environment.init(rawValue:)) }
        set { self.rawReceiptType = newValue?.rawValue }
    }
    /// The raw value of ``receiptType``, exactly as signed.
    public var rawReceiptType: String?

    /// The app's App Store identifier.
    public var appAppleId: Int64?

    /// The app's bundle identifier.
    public var bundleId: String?

    /// The app version the transaction is for.
    public var applicationVersion: String?

    /// The version's external identifier.
    public var versionExternalIdentifier: Int64?

    /// When the App Store created the app transaction; its signing time.
    public var receiptCreationDate: Timestamp?

    /// When the customer first downloaded the app.
    public var originalPurchaseDate: Timestamp?

    /// The app version the customer first downloaded.
    public var originalApplicationVersion: String?

    /// A device-specific verification value.
    public var deviceVerification: String?

    /// The nonce of the device verification value.
    public var deviceVerificationNonce: String?

    /// When the customer pre-ordered the app.
    public var preorderDate: Timestamp?

    /// The app download's unique identifier.
    public var appTransactionId: String?

    /// The platform of the first download. Values this version does not know are kept in ``rawOriginalPlatform``.
    public var originalPlatform: PurchasePlatform? {
        get { self.rawOriginalPlatform.flatMap(PurchasePlatform.init(rawValue:)) }
        set { self.rawOriginalPlatform = newValue?.rawValue }
    }
    /// The raw value of ``originalPlatform``, exactly as signed.
    public var rawOriginalPlatform: String?

    /// Creates an empty value; set the fields you need.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case rawReceiptType = "receiptType"
        case appAppleId
        case bundleId
        case applicationVersion
        case versionExternalIdentifier
        case receiptCreationDate
        case originalPurchaseDate
        case originalApplicationVersion
        case deviceVerification
        case deviceVerificationNonce
        case preorderDate
        case appTransactionId
        case rawOriginalPlatform = "originalPlatform"
    }
}
