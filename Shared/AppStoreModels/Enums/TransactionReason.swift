/// Whether a transaction is a customer purchase or an automatic renewal.
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [TransactionReason](https://developer.apple.com/documentation/appstoreserverapi/transactionreason)
public enum TransactionReason: String, Codable, Hashable, Sendable, CaseIterable {
    case purchase = "PURCHASE"
    case renewal = "RENEWAL"
}
