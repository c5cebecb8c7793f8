/// The platform on which the customer originally purchased the app.
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [PurchasePlatform](https://developer.apple.com/documentation/appstoreserverapi/purchaseplatform)
public enum PurchasePlatform: String, Codable, Hashable, Sendable, CaseIterable {
    case iOS = "iOS"
    case macOS = "macOS"
    case tvOS = "tvOS"
    case visionOS = "visionOS"
}
