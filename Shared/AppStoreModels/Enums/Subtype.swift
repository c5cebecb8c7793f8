/// The subtype that details a notification type.
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [Subtype](https://developer.apple.com/documentation/appstoreservernotifications/subtype)
public enum Subtype: String, Codable, Hashable, Sendable, CaseIterable {
    case initialBuy = "INITIAL_BUY"
    case resubscribe = "RESUBSCRIBE"
    case downgrade = "DOWNGRADE"
    case upgrade = "UPGRADE"
    case autoRenewEnabled = "AUTO_RENEW_ENABLED"
    case autoRenewDisabled = "AUTO_RENEW_DISABLED"
    case voluntary = "VOLUNTARY"
    case billingRetry = "BILLING_RETRY"
    case priceIncrease = "PRICE_INCREASE"
    case gracePeriod = "GRACE_PERIOD"
    case pending = "PENDING"
    case accepted = "ACCEPTED"
    case billingRecovery = "BILLING_RECOVERY"
    case productNotForSale = "PRODUCT_NOT_FOR_SALE"
    case summary = "SUMMARY"
    case failure = "FAILURE"
    case unreported = "UNREPORTED"
    case created = "CREATED"
    case activeTokenReminder = "ACTIVE_TOKEN_REMINDER"
}
