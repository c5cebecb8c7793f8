import Foundation

/// The offer catalog of the sim's app, as its team would write it from App Store Connect
/// (`APPSTORE_OFFER_CATALOG_FILE`): one subscription group with the sim's subscription products, each given the
/// promotional offer its lapsed subscribers come back with.
@_spi(Testing) public enum SimOfferCatalog {
    /// The file name `appstore-sim init` writes it under, beside the offer key.
    static let fileName = "offer-catalog.json"

    /// The catalog document for app `bundleId`.
    @_spi(Testing) public static func json(bundleId: String) -> String {
        let group = [
            ScenarioGenerator.subscriptionProduct: [Scenario.promotionalOfferIdentifier],
            ScenarioGenerator.advancedCommerceProduct: [Scenario.promotionalOfferIdentifier],
        ]
        let data = try! JSONSerialization.data(
            withJSONObject: [bundleId: [ScenarioGenerator.subscriptionGroup: group]], options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}
