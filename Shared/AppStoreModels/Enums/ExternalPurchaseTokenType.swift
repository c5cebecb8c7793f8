/// The kind of an external purchase token (since 2025-06-26).
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [ExternalPurchaseTokenType](https://developer.apple.com/documentation/appstoreservernotifications/externalpurchasetoken)
public enum ExternalPurchaseTokenType: String, Codable, Hashable, Sendable, CaseIterable {
    case services = "SERVICES"
    case acquisition = "ACQUISITION"
}
