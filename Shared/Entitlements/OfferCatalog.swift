import Foundation

/// What the app team sells, as StoreKit knows it from App Store Connect: each app's subscription groups, the
/// products of each group and the promotional offer identifiers each product may be given
/// (`APPSTORE_OFFER_CATALOG_FILE`). customer-api signs offers only from it, never from what stored transactions
/// suggest: an unknown product or offer is 400, and a product's group (for "new to the group" and "subscribed in the
/// group") is the catalog's. The file is JSON, `{bundleId: {groupId: {productId: [offerId, …]}}}`.
public struct OfferCatalog: Hashable, Sendable {
    /// One product as the catalog lists it.
    public struct Product: Hashable, Sendable {
        public var productId: String
        public var groupId: String
        /// Every product of the group (this one included).
        public var groupProducts: [String]
        /// The promotional offer identifiers the product may be given.
        public var promotionalOffers: Set<String>
    }

    /// The products by app and product id.
    private let products: [String: [String: Product]]

    /// An empty catalog: every product is unknown.
    public init() { self.products = [:] }

    /// Parses the JSON document; throws naming what is wrong (a product in two groups, an empty id, not that shape).
    public init(json: [UInt8]) throws(OfferCatalogError) {
        let document: [String: [String: [String: [String]]]]
        do {
            document = try JSONDecoder().decode([String: [String: [String: [String]]]].self, from: Data(json))
        } catch {
            throw OfferCatalogError(#"expected {"<bundleId>": {"<groupId>": {"<productId>": ["<offerId>", …]}}}"#)
        }
        var products: [String: [String: Product]] = [:]
        for (bundleId, groups) in document {
            guard !bundleId.isEmpty else { throw OfferCatalogError("an app's bundle id is empty") }
            for (groupId, members) in groups {
                guard !groupId.isEmpty, !members.isEmpty else {
                    throw OfferCatalogError("\(bundleId): a group needs an id and at least one product")
                }
                for (productId, offers) in members {
                    guard !productId.isEmpty, offers.allSatisfy({ !$0.isEmpty && $0.count <= 256 }) else {
                        throw OfferCatalogError("\(bundleId)/\(groupId): empty product or offer identifier")
                    }
                    if let other = products[bundleId]?[productId] {
                        throw OfferCatalogError(
                            "\(bundleId): \(productId) is in groups \(other.groupId) and \(groupId); a product has one")
                    }
                    products[bundleId, default: [:]][productId] = Product(
                        productId: productId, groupId: groupId, groupProducts: members.keys.sorted(),
                        promotionalOffers: Set(offers))
                }
            }
        }
        self.products = products
    }

    /// The product `productId` of app `bundleId`, if the catalog lists it.
    public func product(_ productId: String, of bundleId: String) -> Product? {
        self.products[bundleId]?[productId]
    }

    /// Whether the catalog lists nothing.
    public var isEmpty: Bool { self.products.isEmpty }
}

/// A catalog document that cannot be used (a permanent configuration error).
public struct OfferCatalogError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}
