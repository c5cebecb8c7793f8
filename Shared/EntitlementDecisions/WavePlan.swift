public import AppStoreModels
public import Entitlements
public import PipelineRecords

/// Everything one wave writes, decided: the results, then the writes in the order the updater runs them
/// (bindings and migrations, one facts statement for the wave, then each input's rare steps in input order).
public struct WavePlan: Sendable {
    /// One result per input of the wave.
    public var results: [ApplyResult]
    /// The subjects bound to an app user by a claim that holds.
    public var bindings: [Binding] = []
    /// The subscriptions migrated to a subject of the wave, recorded now.
    public var migrations: [Migration] = []
    /// Each decided input's facts (log outcome, transaction, renewal info, subscription view, events), in order.
    public var facts: [FactsRow] = []
    /// What some inputs need beyond their facts, in input order.
    public var steps: [Step] = []

    public init(results: [ApplyResult]) {
        self.results = results
    }

    /// An app user bound to a subject; `proof` is what the binding (or a transfer from another owner) was made on.
    public struct Binding: Hashable, Sendable {
        public var entry: NotificationLogEntry
        public var appUserId: String
        /// How the purchase came (``AppPurchaseRecord/Source``), recorded with the binding.
        public var source: String
        public var proof: TransferProof?
    }

    /// The App Store migrated `previous` to the entry's subject: the subject keeps `customer` (bound unless
    /// already bound) and the previous subscription's entitlement rows go.
    public struct Migration: Hashable, Sendable {
        public var previous: String
        public var entry: NotificationLogEntry
        public var customer: String
    }

    /// One input's facts as the rules decided them: `customer` owns its subscription view; `entitlement`, when
    /// given, is written with the facts (no two rows of a wave name the same entitlement row).
    public struct FactsRow: Sendable {
        public var entry: NotificationLogEntry
        public var update: EntitlementUpdate
        public var notification: VerifiedNotification
        public var customer: String
        public var entitlement: EntitlementState?
        /// The update's events, each with its topic, for the outbox.
        public var events: [OutboxEvent]

        public init(
            entry: NotificationLogEntry, update: EntitlementUpdate, notification: VerifiedNotification,
            customer: String, entitlement: EntitlementState?, events: [OutboxEvent]
        ) {
            self.entry = entry
            self.update = update
            self.notification = notification
            self.customer = customer
            self.entitlement = entitlement
            self.events = events
        }
    }

    /// A write one input needs beyond its facts.
    public enum Step: Sendable {
        /// Record a CONSUMPTION_REQUEST (and answer it when the policy allows) for `customer`.
        case consumptionRequest(NotificationLogEntry, VerifiedNotification, customer: String)
        /// Move the subject's rows from the customer they were stored under to `to`.
        case moveRows(NotificationLogEntry, from: String, to: String)
        /// Write an entitlement on its own (a superseded product's, or one that could not go with the facts).
        case upsert(EntitlementState, NotificationLogEntry)
        /// Ask refund-resolver for the subscription's status: the request row and its outbox event.
        case statusRequest(StatusRequest, OutboxEvent)
    }
}

/// One outbox row: an event, a status request or a consumption answer, the topic the publisher relays it to, and the
/// trace it continues.
public struct OutboxEvent: Hashable, Sendable {
    public var id: String
    public var topic: String
    public var key: String
    /// The canonical JSON of the event.
    public var payload: String
    public var environment: String
    public var bundleId: String
    public var traceParent: String?
    /// The subject whose events are numbered one by one (`sequence`, given as the row is written); nil for rows that
    /// are not events for consumers (status requests).
    public var subject: String?

    public init(
        id: String, topic: String, key: String, payload: String, environment: String, bundleId: String,
        traceParent: String?, subject: String? = nil
    ) {
        self.id = id
        self.topic = topic
        self.key = key
        self.payload = payload
        self.environment = environment
        self.bundleId = bundleId
        self.traceParent = traceParent
        self.subject = subject
    }
}
