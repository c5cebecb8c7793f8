import Hummingbird
import Prometheus
import ServiceRuntime

/// `chain-verifier`: verifies every raw notification and publishes it verified, or dead-letters it.
@main
enum ChainVerifierMain {
    static func main() async throws {
        let environment = EnvironmentSettings.process
        let logger = LoggingSetup.bootstrap(service: "chain-verifier", settings: environment)
        let settings = try ChainVerifierSettings(environment)
        let app = try buildApplication(settings: settings, registry: MetricsBootstrap.registry(), logger: logger)
        try await ServiceMain.run(
            app, tracing: try TracingSetup.bootstrap(service: "chain-verifier", settings: environment, logger: logger),
            logger: logger)
    }
}
