/// The outcome of a mass renewal-date extension.
///
/// [Summary](https://developer.apple.com/documentation/appstoreservernotifications/summary)
public struct Summary: Codable, Hashable, Sendable {
    /// The server environment. Values this version does not know are kept in ``rawEnvironment``.
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

    /// The product the extension applied to.
    public var productId: String?

    /// The identifier the developer gave the extension request.
    public var requestIdentifier: String?

    /// The storefronts the extension applied to.
    public var storefrontCountryCodes: [String]?

    /// How many subscriptions were extended.
    public var succeededCount: Int64?

    /// How many subscriptions could not be extended.
    public var failedCount: Int64?

    /// Creates an empty value; set the fields you need.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case rawEnvironment = "environment"
        case appAppleId
        case bundleId
        case productId
        case requestIdentifier
        case storefrontCountryCodes
        case succeededCount
        case failedCount
    }
}
