/// Whether a subscription renews automatically.
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [AutoRenewStatus](https://developer.apple.com/documentation/appstoreserverapi/autorenewstatus)
public enum AutoRenewStatus: Int32, Codable, Hashable, Sendable, CaseIterable {
    case off = 0
    case on = 1
}
