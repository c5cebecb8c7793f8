/// The status of an auto-renewable subscription as of a payload's signedDate.
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [Status](https://developer.apple.com/documentation/appstoreservernotifications/status)
public enum Status: Int32, Codable, Hashable, Sendable, CaseIterable {
    case active = 1
    case expired = 2
    case billingRetry = 3
    case billingGracePeriod = 4
    case revoked = 5
}
