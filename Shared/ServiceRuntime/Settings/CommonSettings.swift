public import RdKafka

/// Where a service's HTTP endpoints listen: `HTTP_HOST` (default `0.0.0.0`) and `HTTP_PORT`.
public struct HTTPSettings: Sendable, Hashable {
    public var host: String
    public var port: Int

    /// Creates settings.
    public init(host: String = "0.0.0.0", port: Int) {
        self.host = host
        self.port = port
    }

    /// Reads `HTTP_HOST` and `HTTP_PORT`.
    public init(_ settings: EnvironmentSettings, defaultPort: Int) throws(SettingsError) {
        self.host = settings.string("HTTP_HOST", default: "0.0.0.0")
        self.port = try settings.int("HTTP_PORT", default: defaultPort)
    }
}

extension KafkaClientSettings {
    /// Reads `KAFKA_BOOTSTRAP_SERVERS` (default `127.0.0.1:9092`); the client id names the service.
    public init(_ settings: EnvironmentSettings, clientID: String) {
        self.init(bootstrapServers: settings.list("KAFKA_BOOTSTRAP_SERVERS", default: ["127.0.0.1:9092"]), clientID: clientID)
    }
}
