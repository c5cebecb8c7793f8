/// Who produces to, consumes from and creates each pipeline topic, with which consumer groups: the one table the
/// Kafka ACLs follow (`iapctl topics --print-kafka-users` writes the Strimzi `KafkaUser`s from it, and a test keeps
/// the committed ones equal to that output).
public struct TopicAccess: Sendable, Hashable {
    /// What a principal may do with a topic.
    public enum Use: String, Sendable, Hashable, CaseIterable, Comparable {
        case create
        case consume
        case produce

        public static func < (a: Use, b: Use) -> Bool {
            Self.allCases.firstIndex(of: a)! < Self.allCases.firstIndex(of: b)!
        }
    }

    /// A topic (or every topic whose name starts with `name`) and what the principal does with it.
    public struct Grant: Sendable, Hashable {
        public var topic: String
        public var prefix: Bool
        public var uses: Set<Use>

        /// A grant on one topic, or on every topic named with a prefix.
        public init(_ topic: String, _ uses: Set<Use>, prefix: Bool = false) {
            self.topic = topic
            self.uses = uses
            self.prefix = prefix
        }
    }

    /// A consumer group the principal joins: its exact name, or every name starting with it.
    public struct Group: Sendable, Hashable {
        public var name: String
        public var prefix: Bool

        /// A group by name or prefix.
        public init(_ name: String, prefix: Bool = false) {
            self.name = name
            self.prefix = prefix
        }
    }

    /// The Kafka user: a service's name, or `pipeline-operator` for the Jobs and iapctl.
    public var principal: String
    /// What it does, in words (the resource's comment).
    public var purpose: String
    public var grants: [Grant]
    public var groups: [Group]

    /// Whether the principal produces anything (its producer is idempotent: IdempotentWrite on the cluster).
    public var produces: Bool { self.grants.contains { $0.uses.contains(.produce) } }

    /// One principal's access.
    public init(principal: String, purpose: String, grants: [Grant], groups: [Group] = []) {
        self.principal = principal
        self.purpose = purpose
        self.grants = grants
        self.groups = groups
    }
}

// MARK: - The table

extension PipelineTopics {
    /// Every principal's access to these topics, in the order of the flow.
    public var access: [TopicAccess] {
        [
            TopicAccess(
                principal: "ingest", purpose: "ingest writes the notifications Apple posted.",
                grants: [.init(self.raw, [.produce])]),
            TopicAccess(
                principal: "chain-verifier", purpose: "chain-verifier reads raw, writes verified and the DLQ.",
                grants: [
                    .init(self.raw, [.consume]), .init(self.verified, [.produce]), .init(self.rejected, [.produce]),
                ],
                groups: [.init("chain-verifier")]),
            TopicAccess(
                principal: "entitlement-updater",
                purpose:
                    "entitlement-updater reads verified, writes the DLQ and records it (groups entitlement-updater "
                    + "and -dead-letters).",
                grants: [.init(self.verified, [.consume]), .init(self.rejected, [.consume, .produce])],
                groups: [.init("entitlement-updater", prefix: true)]),
            TopicAccess(
                principal: "refund-resolver",
                purpose:
                    "refund-resolver reads status requests and its delay queue (groups refund-resolver and -retry), "
                    + "writes the DLQ, and writes what Apple answered to verified: status snapshots and consumption "
                    + "outcomes.",
                grants: [
                    .init(self.statusRequests, [.consume]), .init(self.statusRetry, [.consume, .produce]),
                    .init(self.rejected, [.produce]), .init(self.verified, [.produce]),
                ],
                groups: [.init("refund-resolver", prefix: true)]),
            TopicAccess(
                principal: "event-publisher",
                purpose: "event-publisher relays the outbox: entitlement events and status requests.",
                grants: [
                    .init(self.entitlementChanges, [.produce]), .init(self.entitlementFamily, [.produce]),
                    .init(self.entitlementRevocations, [.produce]), .init(self.statusRequests, [.produce]),
                ]),
            TopicAccess(
                principal: "customer-api",
                purpose:
                    "customer-api writes the purchases apps post (signed records) to verified, and its console "
                    + "replays dead letters to the topic they came from: raw (verified again in full) and status "
                    + "requests (answered by Apple).",
                grants: [
                    .init(self.verified, [.produce]), .init(self.raw, [.produce]),
                    .init(self.statusRequests, [.produce]),
                ]),
            TopicAccess(
                principal: "retention-messaging",
                purpose: "retention-messaging writes its answers to retention.offered.",
                grants: [.init(self.retentionOffered, [.produce])]),
            TopicAccess(
                principal: "webhook-dispatcher",
                purpose: "webhook-dispatcher reads the entitlement events and delivers them to the apps' endpoints.",
                grants: [
                    .init(self.entitlementChanges, [.consume]), .init(self.entitlementFamily, [.consume]),
                    .init(self.entitlementRevocations, [.consume]),
                ],
                groups: [.init("webhook-dispatcher")]),
            TopicAccess(
                principal: "pipeline-operator",
                purpose:
                    "the topics Job and iapctl's operator commands: create topics, replay the DLQ to raw, backfill and "
                    + "resync to verified.",
                grants: [
                    .init("appstore.", [.create, .consume, .produce], prefix: true),
                    .init("entitlements.", [.create], prefix: true), .init(self.retentionOffered, [.create]),
                ],
                groups: [.init("iapctl-", prefix: true)]),
        ]
    }
}

// MARK: - Checking what a service did

extension TopicAccess {
    /// A topic a principal read, with the consumer group it read it in.
    public struct Consumption: Sendable, Hashable, Comparable {
        public var topic: String
        public var group: String

        /// A topic read in a group.
        public init(_ topic: String, group: String) {
            self.topic = topic
            self.group = group
        }

        public static func < (a: Consumption, b: Consumption) -> Bool { (a.topic, a.group) < (b.topic, b.group) }
    }

    /// What a principal was seen doing: the topics it produced to, and the topics it consumed in which groups.
    public struct ObservedUse: Sendable, Hashable {
        public var produced: Set<String>
        public var consumed: Set<Consumption>

        /// What was produced and consumed.
        public init(produced: Set<String> = [], consumed: Set<Consumption> = []) {
            self.produced = produced
            self.consumed = consumed
        }
    }

    /// Whether the grants allow a use of a topic.
    public func allows(_ use: Use, on topic: String) -> Bool {
        self.grants.contains { grant in
            grant.uses.contains(use) && (grant.prefix ? topic.hasPrefix(grant.topic) : topic == grant.topic)
        }
    }

    /// Whether the principal may join a consumer group.
    public func allowsGroup(_ group: String) -> Bool {
        self.groups.contains { $0.prefix ? group.hasPrefix($0.name) : group == $0.name }
    }

    /// What the principal did that its grants do not allow, one sentence each (empty: all of it is allowed).
    public func violations(of observed: ObservedUse) -> [String] {
        var violations: [String] = []
        for topic in observed.produced.sorted() where !self.allows(.produce, on: topic) {
            violations.append("\(self.principal) produced to \(topic) without a Write grant")
        }
        for consumption in observed.consumed.sorted() {
            if !self.allows(.consume, on: consumption.topic) {
                violations.append("\(self.principal) consumed \(consumption.topic) without a Read grant")
            }
            if !self.allowsGroup(consumption.group) {
                violations.append("\(self.principal) consumed in group \(consumption.group) without a grant on it")
            }
        }
        return violations
    }
}
