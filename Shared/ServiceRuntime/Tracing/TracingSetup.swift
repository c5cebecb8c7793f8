import Foundation
public import Logging
import OTel
public import ServiceLifecycle
import Synchronization
import Tracing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Distributed tracing through swift-distributed-tracing, exported by swift-otel over OTLP/HTTP. Off unless
/// `OTEL_TRACES_EXPORTER=otlp`; then the standard OpenTelemetry variables apply (`OTEL_EXPORTER_OTLP_ENDPOINT`,
/// `OTEL_EXPORTER_OTLP_PROTOCOL` `http/protobuf` or `http/json`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_SCHEDULE_DELAY`,
/// …). Only traces: metrics stay on the Prometheus endpoint and logs on standard output.
public enum TracingSetup {
    /// Whether a tracer was bootstrapped (tracing on): the HTTP services add their request span only then, since
    /// with tracing off a span, its attributes and the header extraction per request were ~1 % of ingest's CPU
    /// for nothing.
    public static var isOn: Bool { !(InstrumentationSystem.tracer is NoOpTracer) }

    /// OpenTelemetry's sampler when `OTEL_TRACES_SAMPLER` is unset: every root sampled, every other span as its parent.
    static let defaultSampler = "parentbased_always_on"

    /// Whether the sampler follows a span's parent (`OTEL_TRACES_SAMPLER` `parentbased_*`, OpenTelemetry's default
    /// `parentbased_always_on`): then a trace its root did not sample records nothing anywhere after it, and a stage
    /// may forward it without a span of its own (``TraceHeaders/unsampledTrace(in:)``). Read from the environment,
    /// where swift-otel reads it.
    public static func followsParentSampling(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Bool {
        (environment["OTEL_TRACES_SAMPLER"] ?? Self.defaultSampler).hasPrefix("parentbased_")
    }

    /// How the request middleware samples roots where the service decides them at its door (ingest, under
    /// `parentbased_traceidratio`); nil everywhere else, where swift-otel's sampler decides every span.
    public static var rootSampling: RootSampling? { Self.door.withLock { $0 } }
    private static let door = Mutex<RootSampling?>(nil)

    /// Bootstraps the tracer for a service when tracing is on and returns the exporter's service (run it with the
    /// others, so spans are flushed at shutdown); nil when tracing is off. Once per process, from `main` only.
    ///
    /// `samplesRootsAtTheDoor`: every root of the service's traces begins in ``RequestTracingMiddleware`` (ingest,
    /// whose only spans are its requests'). Under `parentbased_traceidratio` the middleware then decides roots
    /// (``rootSampling``) and swift-otel runs `parentbased_always_on`, so a kept root is sampled once: the process's
    /// own `OTEL_TRACES_SAMPLER` is rewritten before swift-otel reads it, since swift-otel lets the environment
    /// override any sampler set in code. Spans with a parent are decided as before, by the parent.
    public static func bootstrap(
        service: String, settings: EnvironmentSettings, logger: Logger, samplesRootsAtTheDoor: Bool = false
    ) throws(SettingsError) -> (any Service)? {
        let exporter = settings.string("OTEL_TRACES_EXPORTER", default: "none")
        switch exporter {
        case "none": return nil
        case "otlp": break
        default: throw SettingsError("OTEL_TRACES_EXPORTER must be none or otlp, not \(exporter)")
        }
        let sampling = try Self.ratio(settings)
        if samplesRootsAtTheDoor, let sampling {
            setenv("OTEL_TRACES_SAMPLER", Self.defaultSampler, 1)
            unsetenv("OTEL_TRACES_SAMPLER_ARG")
            Self.door.withLock { $0 = sampling }
        }
        var configuration = OTel.Configuration.default
        configuration.serviceName = service
        configuration.traces.enabled = true
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        // The exporter's own messages (export failures, configuration) go to the service's log, warnings and up
        // unless OTEL_LOG_LEVEL says otherwise.
        configuration.diagnosticLogger = .custom(logger)
        configuration.diagnosticLogLevel = .warning
        do {
            let backend = try OTel.makeTracingBackend(configuration: configuration)
            InstrumentationSystem.bootstrap(backend.factory)
            return backend.service
        } catch {
            throw SettingsError("tracing: \(error)")
        }
    }

    // MARK: The sampler's ratio

    /// The root sampling of `parentbased_traceidratio` (`OTEL_TRACES_SAMPLER_ARG`, 1 when unset, as OpenTelemetry
    /// says); nil for any other sampler. A ratio outside 0 through 1, for either ratio sampler, stops the service:
    /// swift-otel would log it and sample everything.
    public static func ratio(_ settings: EnvironmentSettings) throws(SettingsError) -> RootSampling? {
        let sampler = settings.string("OTEL_TRACES_SAMPLER", default: Self.defaultSampler)
        guard sampler == "traceidratio" || sampler == "parentbased_traceidratio" else { return nil }
        let text = settings.string("OTEL_TRACES_SAMPLER_ARG", default: "1")
        guard let ratio = Double(text), ratio >= 0, ratio <= 1 else {
            throw SettingsError("OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 through 1, not \(text)")
        }
        return sampler == "parentbased_traceidratio" ? RootSampling(ratio: ratio) : nil
    }
}
