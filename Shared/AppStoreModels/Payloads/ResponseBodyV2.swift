/// The body Apple POSTs to the notification URL.
///
/// [ResponseBodyV2](https://developer.apple.com/documentation/appstoreservernotifications/responsebodyv2)
public struct ResponseBodyV2: Codable, Hashable, Sendable {
    /// The notification, as a compact JWS signed by the App Store.
    public var signedPayload: String?

    /// Creates an empty value; set the fields you need.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case signedPayload
    }
}
