/// How long a topic keeps its records and why, with the replication every pipeline topic gets. `iapctl topics`
/// creates topics with it, the Strimzi `KafkaTopic` resources state it (a test compares them), and
/// docs/operations.md explains it.
public struct TopicPolicy: Sendable, Hashable {
    /// How long records stay; nil: for ever (`retention.ms=-1`).
    public var retentionDays: Int?
    /// Why that long.
    public var reason: String

    /// Copies of every partition: one broker can be lost, and another restarted, without losing a write.
    public static let replicationFactor = 3
    /// With `acks=all`, a write is acknowledged only once this many copies have it: with three replicas, one may be
    /// down and writes go on; two down and producers stop (ingest answers 503, Apple retries) rather than keep a
    /// single copy.
    public static let minimumInSyncReplicas = 2

    /// Creates a policy.
    public init(retentionDays: Int?, reason: String) {
        self.retentionDays = retentionDays
        self.reason = reason
    }

    /// `retention.ms` as Kafka takes it.
    public var retentionMilliseconds: Int64 {
        self.retentionDays.map { Int64($0) * 86_400_000 } ?? -1
    }

    /// The topic configuration set at creation: retention and `min.insync.replicas` (never above the
    /// replication, so a one-broker development cluster still accepts writes).
    public func configuration(replicationFactor: Int = Self.replicationFactor) -> [String: String] {
        [
            "retention.ms": String(self.retentionMilliseconds),
            "min.insync.replicas": String(min(Self.minimumInSyncReplicas, max(1, replicationFactor - 1))),
            "cleanup.policy": "delete",
        ]
    }
}

extension PipelineTopics {
    /// The policy of each pipeline topic, by name.
    public var policies: [String: TopicPolicy] {
        [
            self.raw: TopicPolicy(
                retentionDays: 30,
                reason: "the bodies Apple posted, signatures intact: re-verified after a fix and replayed; Apple "
                    + "retries a notification for about 3 days, and a verification problem found late must still "
                    + "find the originals"),
            self.verified: TopicPolicy(
                retentionDays: nil,
                reason: "re-applying it from the start rebuilds the database after a restore (the updater is "
                    + "idempotent and stale-safe); shorten it to your database backups' horizon only if you "
                    + "restore from backups instead"),
            self.rejected: TopicPolicy(
                retentionDays: 30,
                reason: "the DLQ: every record carries its reason; iapctl replay sends them back once the cause is "
                    + "fixed, which can take a release cycle"),
            self.statusRequests: TopicPolicy(
                retentionDays: 7,
                reason: "refunds waiting for Get All Subscription Statuses: answered within minutes, a week "
                    + "covers an App Store API outage"),
            self.statusRetry: TopicPolicy(
                retentionDays: 7,
                reason: "refund-resolver's delay queue: its longest back-off is hours"),
            self.entitlementChanges: TopicPolicy(
                retentionDays: 7,
                reason: "other teams' consumers catch up after an outage; eventId makes a re-read harmless"),
            self.entitlementFamily: TopicPolicy(
                retentionDays: 7,
                reason: "as entitlements.changes"),
            self.entitlementRevocations: TopicPolicy(
                retentionDays: 30,
                reason: "refunds and revocations: finance and fraud teams read late (monthly close)"),
            self.retentionOffered: TopicPolicy(
                retentionDays: 30,
                reason: "what customers about to cancel were shown: analytics joins it with the next month's "
                    + "renewals and cancellations"),
        ]
    }
}
