/// Whether the customer consented to a price increase.
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [PriceIncreaseStatus](https://developer.apple.com/documentation/appstoreserverapi/priceincreasestatus)
public enum PriceIncreaseStatus: Int32, Codable, Hashable, Sendable, CaseIterable {
    case customerHasNotResponded = 0
    case customerConsentedOrWasNotifiedWithoutNeedingConsent = 1
}
