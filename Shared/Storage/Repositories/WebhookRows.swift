public import Foundation

// MARK: - Endpoints

/// A registered webhook endpoint as its administrators see it (never its secrets, only their ids and expiries).
public struct WebhookEndpointRow: Sendable, Codable, Equatable {
    /// A signing secret's identity: when it was made and, once a newer one replaced it, until when it still signs.
    public struct SecretInfo: Sendable, Codable, Equatable {
        public var id: String
        public var createdAt: Date
        public var expiresAt: Date?
    }

    public var id: String
    public var environment: String
    public var bundleId: String
    public var url: String
    /// The event types delivered (empty: every type).
    public var eventTypes: [String]
    public var ratePerSecond: Int
    public var concurrency: Int
    public var createdAt: Date
    /// When the dispatcher disabled it (`410 Gone`, or failing for the retry horizon); nil while enabled.
    public var disabledAt: Date?
    public var disabledReason: String?
    public var secrets: [SecretInfo]
    /// Deliveries not yet acknowledged with a 2xx.
    public var pending: Int
}

/// What registering an endpoint needs.
public struct NewWebhookEndpoint: Sendable, Equatable {
    public var environment: String
    public var bundleId: String
    public var url: String
    public var eventTypes: [String]
    public var ratePerSecond: Int
    public var concurrency: Int

    public init(
        environment: String, bundleId: String, url: String, eventTypes: [String], ratePerSecond: Int, concurrency: Int
    ) {
        self.environment = environment
        self.bundleId = bundleId
        self.url = url
        self.eventTypes = eventTypes
        self.ratePerSecond = ratePerSecond
        self.concurrency = concurrency
    }
}

// MARK: - The delivery log

/// One delivery of one event to one endpoint, with every attempt made.
public struct WebhookDeliveryLogEntry: Sendable, Codable, Equatable {
    /// One attempt: when, the HTTP status (nil: no response), how long it took, why it failed, what the endpoint said.
    public struct Attempt: Sendable, Codable, Equatable {
        public var attemptedAt: Date
        public var status: Int?
        public var latencyMs: Int
        public var error: String?
        public var response: String?
    }

    public var id: Int64
    public var eventId: String
    public var eventType: String
    public var subject: String
    public var sequence: Int64?
    /// `pending` or `delivered`.
    public var state: String
    public var createdAt: Date
    public var deliveredAt: Date?
    /// When a pending delivery is tried next.
    public var nextAttemptAt: Date?
    public var attempts: [Attempt]
}

// MARK: - The dispatcher's rows

/// An endpoint as the dispatcher delivers to it: with the secrets that sign (the newest first).
public struct WebhookTarget: Sendable, Equatable {
    public var id: String
    public var environment: String
    public var bundleId: String
    public var url: String
    public var ratePerSecond: Int
    public var concurrency: Int
    /// Whether it takes only some event types (it then sees gaps in a subject's sequence by design).
    public var filtersTypes: Bool
    /// `whsec_…` texts of the secrets not expired.
    public var secrets: [String]
}

/// An event read from an `entitlements.*` topic, to be queued for every endpoint of its app that takes its type.
public struct WebhookEvent: Sendable, Equatable {
    public var environment: String
    public var bundleId: String
    public var eventId: String
    public var eventType: String
    public var subject: String
    public var sequence: Int64?
    /// The event's JSON, delivered as it was published.
    public var payload: String
    public var publishedAt: Date

    public init(
        environment: String, bundleId: String, eventId: String, eventType: String, subject: String, sequence: Int64?,
        payload: String, publishedAt: Date
    ) {
        self.environment = environment
        self.bundleId = bundleId
        self.eventId = eventId
        self.eventType = eventType
        self.subject = subject
        self.sequence = sequence
        self.payload = payload
        self.publishedAt = publishedAt
    }
}

/// A delivery leased to this replica: the oldest pending one of its subject for its endpoint.
public struct ClaimedDelivery: Sendable, Equatable {
    public var id: Int64
    public var eventId: String
    public var eventType: String
    public var subject: String
    public var sequence: Int64?
    public var payload: String
    /// Attempts made before this one.
    public var attempts: Int
    public var firstFailureAt: Date?
    public var publishedAt: Date
}

/// What one attempt of a claimed delivery came to, to be written back with its log line.
public struct DeliveryAttemptRecord: Sendable, Equatable {
    public var deliveryId: Int64
    public var attemptedAt: Date
    /// The HTTP status; nil when no response came (refused, timed out, an address not allowed).
    public var status: Int?
    public var latencyMs: Int
    public var error: String?
    /// The first bytes of the response body.
    public var response: String?
    /// nil when delivered; else when to try again (the delivery stays pending).
    public var retryAt: Date?

    public init(
        deliveryId: Int64, attemptedAt: Date, status: Int?, latencyMs: Int, error: String?, response: String?,
        retryAt: Date?
    ) {
        self.deliveryId = deliveryId
        self.attemptedAt = attemptedAt
        self.status = status
        self.latencyMs = latencyMs
        self.error = error
        self.response = response
        self.retryAt = retryAt
    }
}

/// How a delivery whose subject's previous event (`sequence` − 1) is not queued waits for it: until `seconds` after
/// its own queueing, and also until the dispatcher's intake had handled every `entitlements.*` record published by
/// then, so a predecessor read late (another topic or partition, a restart, a rebalance) is queued first.
public struct PredecessorWait: Sendable, Equatable {
    /// How long after its queueing a delivery's predecessor may still be published (`WEBHOOK_ORDER_WAIT_MS`).
    public var seconds: TimeInterval
    /// How long ago the consumer group was last seen to have handled every record the topics held (nil: not seen
    /// since this replica started, so a delivery missing its predecessor waits).
    public var intakeCaughtUpAgo: TimeInterval?

    /// Creates the wait.
    public init(seconds: TimeInterval, intakeCaughtUpAgo: TimeInterval?) {
        self.seconds = seconds
        self.intakeCaughtUpAgo = intakeCaughtUpAgo
    }
}
