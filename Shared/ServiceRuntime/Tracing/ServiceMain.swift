public import Logging
public import ServiceLifecycle
import UnixSignals

/// How every executable runs: its application, and beside it the trace exporter when tracing is on, in one service
/// group that stops on SIGTERM or SIGINT. The exporter is listed first so it stops last and flushes the spans of
/// the application's own shutdown.
public enum ServiceMain {
    /// Runs until a signal ends the group (or a service fails).
    public static func run(_ application: any Service, tracing: (any Service)?, logger: Logger) async throws {
        let services: [any Service] = (tracing.map { [$0] } ?? []) + [application]
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
