/// How the customer has access to a product.
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [InAppOwnershipType](https://developer.apple.com/documentation/appstoreservernotifications/inappownershiptype)
public enum InAppOwnershipType: String, Codable, Hashable, Sendable, CaseIterable {
    case familyShared = "FAMILY_SHARED"
    case purchased = "PURCHASED"
    case assigned = "ASSIGNED"
}
