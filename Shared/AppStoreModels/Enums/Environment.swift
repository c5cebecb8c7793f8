/// The server environment a payload belongs to.
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [Environment](https://developer.apple.com/documentation/appstoreservernotifications/environment)
public enum Environment: String, Codable, Hashable, Sendable, CaseIterable {
    case sandbox = "Sandbox"
    case production = "Production"
    case xcode = "Xcode"
    case localTesting = "LocalTesting"

    /// Production and Sandbox: what Apple's servers sign and the App Store Server API serves (Xcode and
    /// LocalTesting are StoreKit testing on a developer's machine).
    public var isAppStoreServer: Bool { self == .production || self == .sandbox }
}
