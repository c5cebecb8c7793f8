import Hummingbird
import Prometheus
import ServiceRuntime

/// `refund-resolver`: turns status requests into verified status snapshots through the App Store Server API.
@main
enum RefundResolverMain {
    static func main() async throws {
        let environment = EnvironmentSettings.process
        let logger = LoggingSetup.bootstrap(service: "refund-resolver", settings: environment)
        let app = try buildApplication(
            settings: try RefundResolverSettings(environment), registry: MetricsBootstrap.registry(), logger: logger)
        try await ServiceMain.run(
            app, tracing: try TracingSetup.bootstrap(service: "refund-resolver", settings: environment, logger: logger),
            logger: logger)
    }
}
