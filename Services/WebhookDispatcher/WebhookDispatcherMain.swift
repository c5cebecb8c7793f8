import Hummingbird
import Prometheus
import ServiceRuntime

/// `webhook-dispatcher`: delivers the entitlement events to the HTTPS endpoints apps registered, signed in the
/// Standard Webhooks form, at least once and in order per endpoint and subject.
@main
enum WebhookDispatcherMain {
    static func main() async {
        await ServiceMain.start("webhook-dispatcher") { environment, logger in
            try buildApplication(
                settings: try WebhookDispatcherSettings(environment), registry: MetricsBootstrap.registry(),
                logger: logger)
        }
    }
}
