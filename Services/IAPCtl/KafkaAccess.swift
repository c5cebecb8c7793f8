import RdKafka
import ServiceRuntime

/// The brokers as every `iapctl` command reaches them: the services' own variables (`KAFKA_BOOTSTRAP_SERVERS`,
/// `KAFKA_SECURITY_PROTOCOL`, the SASL and TLS settings, `KAFKA_PROPERTIES`), so a command that works for a
/// service works for the operator too; `--bootstrap-servers` replaces only the broker list.
enum KafkaAccess {
    /// The client settings of a command: the environment's, with `option`'s brokers when given.
    static func client(
        _ option: String?, clientID: String, _ settings: EnvironmentSettings = .process
    ) throws(SettingsError) -> KafkaClientSettings {
        var client = try KafkaClientSettings(settings, clientID: clientID)
        if let option {
            client.bootstrapServers = option.split(separator: ",").map(String.init)
        }
        return client
    }
}
