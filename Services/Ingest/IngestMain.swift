import Hummingbird
import Prometheus
import ServiceRuntime

/// `ingest`: receives App Store Server Notifications and stores them durably in Kafka.
@main
enum IngestMain {
    static func main() async {
        // Every trace begins at ingest's door, and its only spans are its requests': it samples roots itself.
        await ServiceMain.start("ingest", samplesRootsAtTheDoor: true) { environment, logger in
            let registry = MetricsBootstrap.registry()
            try EventLoopConcurrency.install(environment, registry: registry)
            return try buildApplication(settings: try IngestSettings(environment), registry: registry, logger: logger)
        }
    }
}
