/// The type of a subscription offer.
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [OfferType](https://developer.apple.com/documentation/appstoreserverapi/offertype)
public enum OfferType: Int32, Codable, Hashable, Sendable, CaseIterable {
    case introductoryOffer = 1
    case promotionalOffer = 2
    case offerCode = 3
    case winBackOffer = 4
}
