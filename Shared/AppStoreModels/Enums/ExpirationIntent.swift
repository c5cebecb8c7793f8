/// Why a subscription expired.
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [ExpirationIntent](https://developer.apple.com/documentation/appstoreserverapi/expirationintent)
public enum ExpirationIntent: Int32, Codable, Hashable, Sendable, CaseIterable {
    case customerCancelled = 1
    case billingError = 2
    case customerDidNotConsentToPriceIncrease = 3
    case productNotAvailable = 4
    case other = 5
}
