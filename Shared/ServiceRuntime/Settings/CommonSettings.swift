public import RdKafka

/// Where a service's HTTP endpoints listen and how much they take: `HTTP_HOST` (default `0.0.0.0`),
/// `HTTP_PORT`, `HTTP_MAX_CONCURRENT_REQUESTS` (default 256: more are shed with 503), `HTTP_IDLE_TIMEOUT_MS`
/// (default 30000: a connection that sends nothing for that long is closed) and `HTTP_BODY_TIMEOUT_MS`
/// (default 10000, more than 0: a request whose body has not arrived by then, from its head, gets 408).
public struct HTTPSettings: Sendable, Hashable {
    public var host: String
    public var port: Int
    public var maximumConcurrentRequests = 256
    public var idleTimeout: Duration = .seconds(30)
    public var bodyTimeout: Duration = .seconds(10)
    /// How long a client has to deliver a complete request head, from connecting or from the previous response.
    public var headerTimeout: Duration = .seconds(10)
    /// The operations port (`/health`, `/ready`, `/metrics` on a thread of their own) of a service with a public
    /// port (ingest, customer-api); nil: the operations endpoints stay on the public port.
    public var operationsPort: Int?
    /// The proxies in front of the service (`HTTP_TRUSTED_PROXIES`), whose `X-Forwarded-For` names the client for
    /// budgets kept per source; none by default (the peer is the source).
    public var trustedProxies: TrustedProxies = .none

    /// Creates settings.
    public init(host: String = "0.0.0.0", port: Int) {
        self.host = host
        self.port = port
    }

    /// Reads the variables.
    public init(_ settings: EnvironmentSettings, defaultPort: Int) throws(SettingsError) {
        self.host = settings.string("HTTP_HOST", default: "0.0.0.0")
        self.port = try settings.int("HTTP_PORT", default: defaultPort)
        self.maximumConcurrentRequests = max(
            1, try settings.int("HTTP_MAX_CONCURRENT_REQUESTS", default: self.maximumConcurrentRequests))
        self.idleTimeout = try settings.milliseconds("HTTP_IDLE_TIMEOUT_MS", default: self.idleTimeout)
        self.bodyTimeout = try settings.milliseconds("HTTP_BODY_TIMEOUT_MS", default: self.bodyTimeout)
        self.headerTimeout = try settings.milliseconds("HTTP_HEADER_TIMEOUT_MS", default: self.headerTimeout)
        guard self.headerTimeout > .zero else { throw SettingsError("HTTP_HEADER_TIMEOUT_MS must be more than 0") }
        guard self.bodyTimeout > .zero else { throw SettingsError("HTTP_BODY_TIMEOUT_MS must be more than 0") }
        self.trustedProxies = try TrustedProxies(parsing: settings.list("HTTP_TRUSTED_PROXIES"))
        if let text = settings.values["OPERATIONS_PORT"], !text.isEmpty {
            guard let port = Int(text), (1...65_535).contains(port), port != self.port else {
                throw SettingsError("OPERATIONS_PORT must be a port from 1 to 65535 other than HTTP_PORT, not \(text)")
            }
            self.operationsPort = port
        }
    }
}

extension KafkaClientSettings {
    /// Reads `KAFKA_BOOTSTRAP_SERVERS` (default `127.0.0.1:9092`), the security settings (`KafkaSecurity`) and
    /// `KAFKA_PROPERTIES`, librdkafka properties applied last (`name=value`, comma-separated, e.g.
    /// `linger.ms=1,socket.nagle.disable=true`), which may not carry a secret; the client id names the service.
    public init(_ settings: EnvironmentSettings, clientID: String) throws(SettingsError) {
        var additional: [String: String] = [:]
        for entry in settings.list("KAFKA_PROPERTIES") {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty else {
                throw SettingsError("KAFKA_PROPERTIES must be name=value pairs separated by commas, not \(entry)")
            }
            guard !KafkaSecurity.secretProperties.contains(parts[0]) else {
                throw SettingsError(
                    "KAFKA_PROPERTIES may not carry \(parts[0]): put the secret in a file and name it in "
                        + "KAFKA_SASL_PASSWORD_FILE or KAFKA_SSL_KEY_PASSWORD_FILE")
            }
            additional[parts[0]] = parts[1]
        }
        self.init(
            bootstrapServers: settings.list("KAFKA_BOOTSTRAP_SERVERS", default: ["127.0.0.1:9092"]), clientID: clientID,
            security: try KafkaSecurity(settings), additional: additional)
    }
}
