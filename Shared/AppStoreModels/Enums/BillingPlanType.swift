/// How a subscription is billed (since 2026-04-27).
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [BillingPlanType](https://developer.apple.com/documentation/appstoreserverapi/billingplantype)
public enum BillingPlanType: String, Codable, Hashable, Sendable, CaseIterable {
    case billedUpfront = "BILLED_UPFRONT"
    case monthly = "MONTHLY"
}
