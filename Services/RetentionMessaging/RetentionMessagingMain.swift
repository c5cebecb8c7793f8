import Hummingbird
import Prometheus
import ServiceRuntime

/// `retention-messaging`: answers the App Store's Get Retention Message calls in real time (Apple-facing, like ingest;
/// it scales apart from customer-api's app traffic: docs/retention.md).
@main
enum RetentionMessagingMain {
    static func main() async {
        await ServiceMain.start("retention-messaging") { environment, logger in
            try buildApplication(
                settings: try RetentionSettings(environment), registry: MetricsBootstrap.registry(), logger: logger)
        }
    }
}
