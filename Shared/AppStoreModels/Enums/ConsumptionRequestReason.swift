/// The customer-provided reason for a refund request (CONSUMPTION_REQUEST).
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [ConsumptionRequestReason](https://developer.apple.com/documentation/appstoreservernotifications/consumptionrequestreason)
public enum ConsumptionRequestReason: String, Codable, Hashable, Sendable, CaseIterable {
    case unintendedPurchase = "UNINTENDED_PURCHASE"
    case fulfillmentIssue = "FULFILLMENT_ISSUE"
    case unsatisfiedWithPurchase = "UNSATISFIED_WITH_PURCHASE"
    case legal = "LEGAL"
    case other = "OTHER"
}
