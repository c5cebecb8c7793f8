import RdKafka
import ServiceRuntime
import Storage
import TestSupport

@testable import EntitlementUpdater

extension EntitlementUpdaterSettings {
    /// The updater as these tests run it in process: the local database and broker, every producer's test key, its
    /// operations port on any free loopback port, and a short session so a rebalance does not hold a test up.
    static func local(database: DatabaseSettings, bootstrap: String) -> EntitlementUpdaterSettings {
        var settings = EntitlementUpdaterSettings(
            database: database, kafka: KafkaClientSettings(bootstrapServers: [bootstrap]),
            signing: TestRecordSigning.verifier)
        settings.http = HTTPSettings(host: "127.0.0.1", port: 0)
        settings.sessionTimeout = .seconds(6)
        return settings
    }
}
