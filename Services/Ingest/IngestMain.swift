import Hummingbird
import Prometheus
import ServiceRuntime

/// `ingest`: receives App Store Server Notifications and stores them durably in Kafka.
@main
enum IngestMain {
    static func main() async {
        await ServiceMain.start("ingest") { environment, logger in
            try EventLoopConcurrency.install(environment)
            return try buildApplication(
                settings: try IngestSettings(environment), registry: MetricsBootstrap.registry(), logger: logger)
        }
    }
}
