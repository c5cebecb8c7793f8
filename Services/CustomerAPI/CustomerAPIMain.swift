import Hummingbird
import Prometheus
import ServiceRuntime

/// `customer-api`: the app teams' HTTP door. It reads PostgreSQL and never writes entitlement state.
@main
enum CustomerAPIMain {
    static func main() async {
        await ServiceMain.start("customer-api") { environment, logger in
            try buildApplication(
                settings: try CustomerAPISettings(environment), registry: MetricsBootstrap.registry(), logger: logger)
        }
    }
}
