public import Entitlements
public import PipelineRecords

/// One input of the entitlement-updater, with ingest's receipt time (epoch ms) when known.
public struct EntitlementInput: Sendable {
    /// What is applied.
    public enum Kind: Sendable {
        /// A verified notification from Apple.
        case notification(VerifiedNotificationRecord)
        /// refund-resolver's status snapshot.
        case snapshot(StatusSnapshot)
        /// A purchase the app posted through customer-api (or `iapctl resync` imported).
        case purchase(AppPurchaseRecord)
    }

    public var kind: Kind
    public var receivedAt: Int64?
    /// The W3C `traceparent` of the span that applies it; its events carry it on through the outbox (nil: none).
    public var traceParent: String?

    public init(_ kind: Kind, receivedAt: Int64?, traceParent: String? = nil) {
        self.kind = kind
        self.receivedAt = receivedAt
        self.traceParent = traceParent
    }
}

/// What applying one input did, as the updater reports it.
public enum ApplyResult: Equatable, Sendable {
    /// Already applied before (same log id): nothing changed.
    case duplicate
    /// Applied (or logged as stale, ignored, unknown, awaiting status, conflict) with this outcome.
    case recorded(EntitlementUpdate.Outcome)
}
