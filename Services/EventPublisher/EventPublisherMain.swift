import Hummingbird
import Prometheus
import ServiceRuntime

/// `event-publisher`: relays the outbox to the downstream entitlement topics.
@main
enum EventPublisherMain {
    static func main() async throws {
        let environment = EnvironmentSettings.process
        let logger = LoggingSetup.bootstrap(service: "event-publisher", settings: environment)
        let app = try buildApplication(
            settings: try EventPublisherSettings(environment), registry: MetricsBootstrap.registry(), logger: logger)
        try await ServiceMain.run(
            app, tracing: try TracingSetup.bootstrap(service: "event-publisher", settings: environment, logger: logger),
            logger: logger)
    }
}
