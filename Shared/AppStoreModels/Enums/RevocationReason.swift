/// Why the App Store refunded or revoked a transaction.
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [RevocationReason](https://developer.apple.com/documentation/appstoreservernotifications/revocationreason)
public enum RevocationReason: Int32, Codable, Hashable, Sendable, CaseIterable {
    case refundedDueToIssue = 1
    case refundedForOtherReason = 0
}
