import Hummingbird
import Prometheus
import ServiceRuntime

/// `customer-api`: the app teams' HTTP door. It reads PostgreSQL and never writes entitlement state.
@main
enum CustomerAPIMain {
    static func main() async throws {
        let environment = EnvironmentSettings.process
        let logger = LoggingSetup.bootstrap(service: "customer-api", settings: environment)
        let app = try buildApplication(
            settings: try CustomerAPISettings(environment), registry: MetricsBootstrap.registry(), logger: logger)
        try await ServiceMain.run(
            app, tracing: try TracingSetup.bootstrap(service: "customer-api", settings: environment, logger: logger),
            logger: logger)
    }
}
