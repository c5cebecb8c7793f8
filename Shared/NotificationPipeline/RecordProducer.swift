import Entitlements
import PipelineRecords

/// Who may write which record kind to the verified topic: the one table the entitlement-updater checks every
/// signed record against (``RecordVerifier``). Each producer signs with keys of its own, so a key that leaks
/// from one service writes only what that service writes: customer-api's key, on the internet, can post an app
/// purchase (which the updater still checks against Apple's signature and its owner) but never a verified
/// notification or a status snapshot.
public enum RecordProducer: String, Sendable, Hashable, CaseIterable {
    /// Verified notifications: Apple's signature checked, nothing else.
    case chainVerifier = "chain-verifier"
    /// App purchases the apps post, and the consumption facts app teams record.
    case customerAPI = "customer-api"
    /// Status snapshots (Apple's answers to status requests) and what became of consumption answers.
    case refundResolver = "refund-resolver"
    /// The operator's tool: `iapctl resync` imports purchases and their statuses.
    case iapctl

    /// The `schema` header values this producer may sign (a record without one is a verified notification).
    public var kinds: Set<String> {
        switch self {
        case .chainVerifier: [VerifiedNotificationRecord.schema]
        case .customerAPI: [AppPurchaseRecord.schema, ConsumptionFactsRecord.schema]
        case .refundResolver: [StatusSnapshot.schema, ConsumptionOutcome.schema]
        case .iapctl: [AppPurchaseRecord.schema, StatusSnapshot.schema, ConsumptionOutcome.schema]
        }
    }

    /// Whether this producer may sign records of `schema` (nil: a verified notification).
    public func mayWrite(schema: String?) -> Bool {
        self.kinds.contains(schema ?? VerifiedNotificationRecord.schema)
    }
}
