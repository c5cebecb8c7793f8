import Hummingbird
import Prometheus
import ServiceRuntime

/// `event-publisher`: relays the outbox to the downstream entitlement topics.
@main
enum EventPublisherMain {
    static func main() async {
        await ServiceMain.start("event-publisher") { environment, logger in
            try buildApplication(
                settings: try EventPublisherSettings(environment), registry: MetricsBootstrap.registry(), logger: logger
            )
        }
    }
}
