/// App-level data of a notification that concerns the app, not a purchase (RESCIND_CONSENT).
///
/// [AppData](https://developer.apple.com/documentation/appstoreservernotifications/appdata)
public struct AppData: Codable, Hashable, Sendable {
    /// The app's App Store identifier.
    public var appAppleId: Int64?

    /// The app's bundle identifier.
    public var bundleId: String?

    /// The server environment. Values this version does not know are kept in ``rawEnvironment``.
    public var environment: Environment? {
        get { self.rawEnvironment.flatMap(Environment.init(rawValue:)) }
        set { self.rawEnvironment = newValue?.rawValue }
    }
    /// The raw value of ``environment``, exactly as signed.
    public var rawEnvironment: String?

    /// The app transaction, as a JWS.
    public var signedAppTransactionInfo: String?

    /// Creates an empty value; set the fields you need.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case appAppleId
        case bundleId
        case rawEnvironment = "environment"
        case signedAppTransactionInfo
    }
}
