public import Logging
public import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How every executable runs: its application, and beside it the trace exporter when tracing is on, in one service
/// group that stops on SIGTERM or SIGINT. The exporter is listed first so it stops last and flushes the spans of
/// the application's own shutdown.
public enum ServiceMain {
    // MARK: Starting an executable

    /// Starts the executable `service`: its logger, tracing, its application from `build` (settings are read there,
    /// so a bad one stops it here), then ``run(_:tracing:logger:)`` until a signal. It ends the process: status 0
    /// after a signal's graceful stop, status 1 after any error, logged first. An error is never thrown out of
    /// `main`: that is a crash, and the runtime's backtracer then symbolicates for seconds (minutes on a loaded
    /// machine) while the process is alive but answers nothing, which an orchestrator cannot tell from a hang.
    ///
    /// `samplesRootsAtTheDoor`: every root of the service's traces begins at its HTTP door
    /// (``TracingSetup/bootstrap(service:settings:logger:samplesRootsAtTheDoor:)``).
    public static func start(
        _ service: String, samplesRootsAtTheDoor: Bool = false,
        build: @Sendable (EnvironmentSettings, Logger) throws -> any Service
    ) async -> Never {
        let environment = EnvironmentSettings.process
        let level = Result { () throws(SettingsError) in try LoggingSetup.level(environment) }
        // A bad LOG_LEVEL is told at the default level, then stops the service like any bad setting.
        let logger = LoggingSetup.bootstrap(service: service, level: (try? level.get()) ?? .info)
        do {
            _ = try level.get()
            // Tracing first: `build` adds a request span only when a tracer is there (``TracingSetup/isOn``).
            let tracing = try TracingSetup.bootstrap(
                service: service, settings: environment, logger: logger, samplesRootsAtTheDoor: samplesRootsAtTheDoor)
            let application = try build(environment, logger)
            try await Self.run(application, tracing: tracing, logger: logger)
            exit(0)
        } catch {
            logger.critical("\(service) stopped: \(error)", metadata: ["error": "\(String(reflecting: error))"])
            exit(1)
        }
    }

    // MARK: Running the group

    /// Runs until a signal ends the group (or a service fails).
    static func run(_ application: any Service, tracing: (any Service)?, logger: Logger) async throws {
        let services: [any Service] = (tracing.map { [$0] } ?? []) + [application]
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
