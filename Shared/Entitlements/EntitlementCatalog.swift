import Foundation

/// Which entitlement each product grants: the product→entitlement map of the configuration
/// (`ENTITLEMENT_MAP`, `product=entitlement,…`). A product the map does not name grants an entitlement of
/// its own name, so an empty catalog keeps one entitlement per product.
///
/// Two products of one entitlement (a monthly and a yearly plan of "pro") make a change between them one
/// product change of that entitlement, not an expiry and a grant.
public struct EntitlementCatalog: Hashable, Sendable {
    /// The explicit product → entitlement pairs.
    public var entitlements: [String: String]

    public init(_ entitlements: [String: String] = [:]) {
        self.entitlements = entitlements
    }

    /// Parses `product=entitlement` pairs separated by commas (white space around them is ignored).
    public init(parsing text: String) throws(EntitlementCatalogError) {
        var map: [String: String] = [:]
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw EntitlementCatalogError("expected product=entitlement, not \"\(pair)\"")
            }
            guard map[parts[0]] == nil || map[parts[0]] == parts[1] else {
                throw EntitlementCatalogError("product \(parts[0]) is mapped to both \(map[parts[0]]!) and \(parts[1])")
            }
            map[parts[0]] = parts[1]
        }
        self.entitlements = map
    }

    /// The entitlement a product grants.
    public func entitlement(of productId: String) -> String {
        self.entitlements[productId] ?? productId
    }
}

/// A product→entitlement map that cannot be read (a permanent configuration error).
public struct EntitlementCatalogError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}
