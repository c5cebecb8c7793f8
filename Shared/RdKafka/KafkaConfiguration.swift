/// Settings shared by every Kafka client.
public struct KafkaClientSettings: Sendable, Hashable {
    /// `host:port` of one or more brokers.
    public var bootstrapServers: [String]
    /// The client identifier brokers log. Default: `appstore-pipeline`.
    public var clientID: String = "appstore-pipeline"
    /// Encryption and authentication. Default: plaintext.
    public var security: KafkaSecurity = .plaintext
    /// Any other librdkafka property, applied last (it overrides the typed ones).
    public var additional: [String: String] = [:]

    /// Creates settings for brokers.
    public init(
        bootstrapServers: [String], clientID: String = "appstore-pipeline", security: KafkaSecurity = .plaintext,
        additional: [String: String] = [:]
    ) {
        self.bootstrapServers = bootstrapServers
        self.clientID = clientID
        self.security = security
        self.additional = additional
    }

    /// The properties every client gets: brokers, client id and security.
    var baseProperties: [String: String] {
        var properties = self.security.librdkafkaProperties
        properties["bootstrap.servers"] = self.bootstrapServers.joined(separator: ",")
        properties["client.id"] = self.clientID
        return properties
    }
}

/// An idempotent, `acks=all` producer's settings.
public struct KafkaProducerConfiguration: Sendable, Hashable {
    public var client: KafkaClientSettings
    /// How long librdkafka keeps trying to deliver a message before failing it. Default: 30 s.
    public var deliveryTimeout: Duration = .seconds(30)
    /// How long to wait for more messages to batch. Default: 2 ms.
    public var linger: Duration = .milliseconds(2)
    /// How long shutdown waits for queued messages. Default: 10 s.
    public var shutdownFlushTimeout: Duration = .seconds(10)

    /// Creates producer settings.
    public init(client: KafkaClientSettings) {
        self.client = client
    }

    /// The librdkafka properties: idempotence (which implies `acks=all` and ordered retries).
    public var librdkafkaProperties: [String: String] {
        var properties = self.client.baseProperties
        properties["enable.idempotence"] = "true"
        properties["acks"] = "all"
        properties["message.timeout.ms"] = String(self.deliveryTimeout.milliseconds)
        properties["linger.ms"] = String(self.linger.milliseconds)
        return properties.merging(self.client.additional) { _, override in override }
    }
}

/// An at-least-once consumer group member's settings.
public struct KafkaConsumerConfiguration: Sendable, Hashable {
    public var client: KafkaClientSettings
    /// The consumer group.
    public var groupID: String
    /// The topics to subscribe to.
    public var topics: [String]
    /// How long the group waits for a silent member. Default: 45 s (tests use 6 s for faster joins).
    public var sessionTimeout: Duration = .seconds(45)
    /// How often the member heartbeats. Default: 3 s.
    public var heartbeatInterval: Duration = .seconds(3)
    /// The longest gap between polls before the member is removed. Default: 300 s.
    public var maxPollInterval: Duration = .seconds(300)
    /// How long the broker may hold a fetch that found nothing new (`fetch.wait.max.ms`). librdkafka's 500 ms
    /// default added up to half a second per hop at low rates on some brokers; 100 ms bounds it.
    public var fetchWait: Duration = .milliseconds(100)
    /// How long librdkafka waits to fetch again once its prefetch queue was over its bound
    /// (`fetch.queue.backoff.ms`). Its default of 1 s starved a consumer that drains a backlog of ~19 KB messages
    /// faster than that: the chain-verifier sat idle between batches. Set only on runtimes that know the property
    /// (librdkafka 2.1 and later; Debian's 2.0.2 does not).
    public var fetchQueueBackoff: Duration = .milliseconds(10)

    /// Creates consumer settings.
    public init(client: KafkaClientSettings, groupID: String, topics: [String]) {
        self.client = client
        self.groupID = groupID
        self.topics = topics
    }

    /// Creates consumer settings with a session timeout, heartbeating six times per session (at most every 3 s).
    public init(client: KafkaClientSettings, groupID: String, topics: [String], sessionTimeout: Duration) {
        self.init(client: client, groupID: groupID, topics: topics)
        self.sessionTimeout = sessionTimeout
        self.heartbeatInterval = min(.seconds(3), sessionTimeout / 6)
    }

    /// The librdkafka properties. Offsets are stored by the application only after its effect is durable
    /// (`enable.auto.offset.store=false`) and committed in the background; a new group starts at the
    /// beginning (`auto.offset.reset=earliest`, librdkafka's default is `largest`).
    public var librdkafkaProperties: [String: String] {
        var properties = self.client.baseProperties
        properties["group.id"] = self.groupID
        properties["enable.auto.commit"] = "true"
        properties["enable.auto.offset.store"] = "false"
        properties["auto.offset.reset"] = "earliest"
        properties["session.timeout.ms"] = String(self.sessionTimeout.milliseconds)
        properties["heartbeat.interval.ms"] = String(self.heartbeatInterval.milliseconds)
        properties["max.poll.interval.ms"] = String(self.maxPollInterval.milliseconds)
        properties["fetch.wait.max.ms"] = String(self.fetchWait.milliseconds)
        if RdKafkaClient.runtimeVersionNumber >= 0x0201_0000 {
            properties["fetch.queue.backoff.ms"] = String(self.fetchQueueBackoff.milliseconds)
        }
        return properties.merging(self.client.additional) { _, override in override }
    }
}

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = self.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
