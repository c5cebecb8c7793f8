import Foundation

/// What a transaction of the Advanced Commerce API carries in `advancedCommerceInfo`: the SKUs the developer sold in
/// it (each with its own price, refunds and revocation), and the tax and period of the whole.
///
/// [AdvancedCommerceTransactionInfo](https://developer.apple.com/documentation/appstoreserverapi/advancedcommercetransactioninfo)
public struct AdvancedCommerceTransactionInfo: Codable, Hashable, Sendable {
    /// The items of the purchase, one per SKU.
    public var items: [AdvancedCommerceTransactionItem]?
    /// The developer's reference of the request that made the purchase.
    public var requestReferenceId: String?
    /// The billing period of a subscription (`P1W`, `P1M`, …).
    public var period: String?
    public var taxCode: String?
    /// Estimated tax and the price without it, in milliunits.
    public var estimatedTax: Int64?
    public var taxExclusivePrice: Int64?
    public var taxRate: String?

    /// Creates an empty value; set the fields you need.
    public init() {}

    /// The items with at least one refund or a revocation: what one refund notification of the purchase reports.
    public var refundedItems: [AdvancedCommerceTransactionItem] {
        (self.items ?? []).filter { !($0.refunds ?? []).isEmpty || $0.revocationDate != nil }
    }
}

/// One SKU of an Advanced Commerce purchase, with the refunds the App Store granted for it (cumulative: each
/// transaction Apple signs lists every refund so far).
///
/// [AdvancedCommerceTransactionItem](https://developer.apple.com/documentation/appstoreserverapi/advancedcommercetransactionitem)
public struct AdvancedCommerceTransactionItem: Codable, Hashable, Sendable {
    public var sku: String?
    public var description: String?
    public var displayName: String?
    /// The item's price in milliunits.
    public var price: Int64?
    public var refunds: [AdvancedCommerceRefund]?
    /// When the App Store revoked the item.
    public var revocationDate: Timestamp?

    /// Creates an empty value; set the fields you need.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case sku = "SKU"
        case description, displayName, price, refunds, revocationDate
    }
}

/// One refund of an Advanced Commerce item.
///
/// [AdvancedCommerceRefund](https://developer.apple.com/documentation/appstoreserverapi/advancedcommercerefund)
public struct AdvancedCommerceRefund: Codable, Hashable, Sendable {
    /// The refunded amount in milliunits.
    public var refundAmount: Int64?
    public var refundDate: Timestamp?
    /// `UNINTENDED_PURCHASE`, `FULFILLMENT_ISSUE`, `UNSATISFIED_WITH_PURCHASE`, `LEGAL`, `OTHER`, `MODIFY_ITEMS_REFUND`,
    /// `SIMULATE_REFUND_DECLINE`, or a value Apple adds later.
    public var refundReason: String?
    /// `FULL`, `PRORATED`, `CUSTOM`, or a value Apple adds later.
    public var refundType: String?

    /// Creates an empty value; set the fields you need.
    public init() {}
}

extension JWSTransactionDecodedPayload {
    /// `advancedCommerceInfo` read as Apple's Advanced Commerce model (nil when absent or not of that shape; the
    /// signed value itself is always kept as it came).
    public var advancedCommerceTransaction: AdvancedCommerceTransactionInfo? {
        guard let info = self.advancedCommerceInfo, case .object = info,
            let data = try? AppStoreJSON.makeCanonicalEncoder().encode(info)
        else { return nil }
        return try? AppStoreJSON.makeDecoder().decode(AdvancedCommerceTransactionInfo.self, from: data)
    }
}
