import Hummingbird
import Prometheus
import ServiceRuntime

/// `ingest`: receives App Store Server Notifications and stores them durably in Kafka.
@main
enum IngestMain {
    static func main() async throws {
        let environment = EnvironmentSettings.process
        try EventLoopConcurrency.install(environment)
        let logger = LoggingSetup.bootstrap(service: "ingest", settings: environment)
        let settings = try IngestSettings(environment)
        let app = try buildApplication(settings: settings, registry: MetricsBootstrap.registry(), logger: logger)
        try await ServiceMain.run(
            app, tracing: try TracingSetup.bootstrap(service: "ingest", settings: environment, logger: logger),
            logger: logger)
    }
}
