/// How a transaction was revoked (since 2025-12-10).
///
/// Decoded payloads keep the raw value beside this typed view, so values Apple adds later pass through.
/// [RevocationType](https://developer.apple.com/documentation/appstoreserverapi/revocationtype)
public enum RevocationType: String, Codable, Hashable, Sendable, CaseIterable {
    case refundFull = "REFUND_FULL"
    case refundProrated = "REFUND_PRORATED"
    case familyRevoke = "FAMILY_REVOKE"
    /// Reported by a third party for organization-assigned access; unverified against Apple's server docs.
    case assignmentRevoke = "ASSIGNMENT_REVOKE"
}
