/// The kind of in-app purchase a transaction is for.
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [ProductType](https://developer.apple.com/documentation/appstoreserverapi/type)
public enum ProductType: String, Codable, Hashable, Sendable, CaseIterable {
    case autoRenewableSubscription = "Auto-Renewable Subscription"
    case nonConsumable = "Non-Consumable"
    case consumable = "Consumable"
    case nonRenewingSubscription = "Non-Renewing Subscription"
}
