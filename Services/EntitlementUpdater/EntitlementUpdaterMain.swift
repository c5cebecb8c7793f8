import Hummingbird
import Prometheus
import ServiceRuntime

/// `entitlement-updater`: applies verified notifications to PostgreSQL, the only writer of entitlements.
@main
enum EntitlementUpdaterMain {
    static func main() async throws {
        let environment = EnvironmentSettings.process
        let logger = LoggingSetup.bootstrap(service: "entitlement-updater", settings: environment)
        let app = try buildApplication(
            settings: try EntitlementUpdaterSettings(environment), registry: MetricsBootstrap.registry(),
            logger: logger)
        try await ServiceMain.run(
            app,
            tracing: try TracingSetup.bootstrap(service: "entitlement-updater", settings: environment, logger: logger),
            logger: logger)
    }
}
