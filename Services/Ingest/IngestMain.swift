import Hummingbird
import Prometheus
import ServiceRuntime

/// `ingest`: receives App Store Server Notifications and stores them durably in Kafka.
@main
enum IngestMain {
    static func main() async {
        await ServiceMain.start("ingest") { environment, logger in
            let registry = MetricsBootstrap.registry()
            try EventLoopConcurrency.install(environment, registry: registry)
            return try buildApplication(settings: try IngestSettings(environment), registry: registry, logger: logger)
        }
    }
}
