import Hummingbird
import Prometheus
import ServiceRuntime

/// `refund-resolver`: turns status requests into verified status snapshots through the App Store Server API.
@main
enum RefundResolverMain {
    static func main() async {
        await ServiceMain.start("refund-resolver") { environment, logger in
            try buildApplication(
                settings: try RefundResolverSettings(environment), registry: MetricsBootstrap.registry(), logger: logger
            )
        }
    }
}
