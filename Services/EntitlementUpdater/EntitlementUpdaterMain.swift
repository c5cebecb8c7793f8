import Hummingbird
import Prometheus
import ServiceRuntime

/// `entitlement-updater`: applies verified notifications to PostgreSQL, the only writer of entitlements.
@main
enum EntitlementUpdaterMain {
    static func main() async {
        await ServiceMain.start("entitlement-updater") { environment, logger in
            try buildApplication(
                settings: try EntitlementUpdaterSettings(environment), registry: MetricsBootstrap.registry(),
                logger: logger)
        }
    }
}
