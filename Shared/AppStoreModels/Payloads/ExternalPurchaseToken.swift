/// An external purchase token reported by the App Store.
///
/// [ExternalPurchaseToken](https://developer.apple.com/documentation/appstoreservernotifications/externalpurchasetoken)
public struct ExternalPurchaseToken: Codable, Hashable, Sendable {
    /// The token's unique identifier; sandbox tokens start with "SANDBOX".
    public var externalPurchaseId: String?

    /// When the token was created.
    public var tokenCreationDate: Timestamp?

    /// The app's App Store identifier.
    public var appAppleId: Int64?

    /// The app's bundle identifier.
    public var bundleId: String?

    /// The kind of token (since 2025-06-26). Values this version does not know are kept in ``rawTokenType``.
    public var tokenType: ExternalPurchaseTokenType? {
        get { self.rawTokenType.flatMap(ExternalPurchaseTokenType.init(rawValue:)) }
        set { self.rawTokenType = newValue?.rawValue }
    }
    /// The raw value of ``tokenType``, exactly as signed.
    public var rawTokenType: String?

    /// When the token expires (since 2025-06-26).
    public var tokenExpirationDate: Timestamp?

    /// Creates an empty value; set the fields you need.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case externalPurchaseId
        case tokenCreationDate
        case appAppleId
        case bundleId
        case rawTokenType = "tokenType"
        case tokenExpirationDate
    }
}
