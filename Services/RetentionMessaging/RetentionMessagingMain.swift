import Hummingbird
import Prometheus
import ServiceRuntime

/// `retention-messaging`: answers the App Store's Get Retention Message calls in real time (Apple-facing, like ingest;
/// it scales apart from customer-api's app traffic: docs/retention.md).
@main
enum RetentionMessagingMain {
    static func main() async throws {
        let environment = EnvironmentSettings.process
        let logger = LoggingSetup.bootstrap(service: "retention-messaging", settings: environment)
        let app = try buildApplication(
            settings: try RetentionSettings(environment), registry: MetricsBootstrap.registry(), logger: logger)
        try await ServiceMain.run(
            app,
            tracing: try TracingSetup.bootstrap(service: "retention-messaging", settings: environment, logger: logger),
            logger: logger)
    }
}
