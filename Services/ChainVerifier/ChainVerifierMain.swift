import Hummingbird
import Prometheus
import ServiceRuntime

/// `chain-verifier`: verifies every raw notification and publishes it verified, or dead-letters it.
@main
enum ChainVerifierMain {
    static func main() async {
        await ServiceMain.start("chain-verifier") { environment, logger in
            try buildApplication(
                settings: try ChainVerifierSettings(environment), registry: MetricsBootstrap.registry(), logger: logger)
        }
    }
}
