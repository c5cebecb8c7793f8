import Hummingbird
import Prometheus
import ServiceRuntime

/// `retention-messaging`: answers the App Store's Get Retention Message calls in real time (Apple-facing, like ingest;
/// it scales apart from customer-api's app traffic: docs/retention.md).
@main
enum RetentionMessagingMain {
    static func main() async {
        await ServiceMain.start("retention-messaging") { environment, logger in
            // Tasks on NIO's event loops, as in ingest (`SWIFT_TASKS_ON_EVENT_LOOPS`): the request, its PostgreSQL
            // query and its answer do their I/O where the handler runs, with no hop to Swift's pool and back.
            let registry = MetricsBootstrap.registry()
            try EventLoopConcurrency.install(environment, registry: registry)
            return try buildApplication(
                settings: try RetentionSettings(environment), registry: registry, logger: logger)
        }
    }
}
