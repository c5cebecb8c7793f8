/// The pipeline's topics. Every name is configuration; these are the defaults.
public struct PipelineTopics: Sendable, Hashable {
    /// Notifications as Apple posted them (ingest → chain-verifier). Key: subject.
    public var raw = "appstore.notifications.raw"
    /// Verified, decoded notifications (chain-verifier → entitlement-updater). Key: subject.
    public var verified = "appstore.notifications.verified"
    /// Refused messages with their reason (the DLQ).
    public var rejected = "appstore.notifications.rejected"
    /// Subscription status requests for refund-resolver.
    public var statusRequests = "appstore.status.requests"
    /// Status requests refund-resolver rescheduled (its delay queue).
    public var statusRetry = "appstore.status.requests.retry"
    /// Entitlement changes for other teams. Key: customer.
    public var entitlementChanges = "entitlements.changes"
    /// Family-sharing gains and losses. Key: customer.
    public var entitlementFamily = "entitlements.family"
    /// Refunds and revocations. Key: customer.
    public var entitlementRevocations = "entitlements.revocations"
    /// Every answer retention-messaging gave Apple's real-time requests, for analytics. Key: originalTransactionId.
    public var retentionOffered = "retention.offered"

    /// The default names.
    public init() {}

    /// Every topic, for `iapctl topics`.
    public var all: [String] {
        [
            self.raw, self.verified, self.rejected, self.statusRequests, self.statusRetry, self.entitlementChanges,
            self.entitlementFamily,
            self.entitlementRevocations, self.retentionOffered,
        ]
    }
}
