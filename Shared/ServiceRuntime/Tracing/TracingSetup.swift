import Foundation
public import Logging
import OTel
public import ServiceLifecycle
import Tracing

/// Distributed tracing through swift-distributed-tracing, exported by swift-otel over OTLP/HTTP. Off unless
/// `OTEL_TRACES_EXPORTER=otlp`; then the standard OpenTelemetry variables apply (`OTEL_EXPORTER_OTLP_ENDPOINT`,
/// `OTEL_EXPORTER_OTLP_PROTOCOL` `http/protobuf` or `http/json`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_SCHEDULE_DELAY`,
/// …). Only traces: metrics stay on the Prometheus endpoint and logs on standard output.
public enum TracingSetup {
    /// Whether a tracer was bootstrapped (tracing on): the HTTP services add their request span only then, since
    /// with tracing off a span, its attributes and the header extraction per request were ~1 % of ingest's CPU
    /// for nothing.
    public static var isOn: Bool { !(InstrumentationSystem.tracer is NoOpTracer) }

    /// Whether the sampler follows a span's parent (`OTEL_TRACES_SAMPLER` `parentbased_*`, OpenTelemetry's default
    /// `parentbased_always_on`): then a trace its root did not sample records nothing anywhere after it, and a stage
    /// may forward it without a span of its own (``TraceHeaders/unsampledTrace(in:)``). Read from the environment,
    /// where swift-otel reads it.
    public static func followsParentSampling(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Bool {
        (environment["OTEL_TRACES_SAMPLER"] ?? "parentbased_always_on").hasPrefix("parentbased_")
    }

    /// Bootstraps the tracer for a service when tracing is on and returns the exporter's service (run it with the
    /// others, so spans are flushed at shutdown); nil when tracing is off. Once per process, from `main` only.
    public static func bootstrap(service: String, settings: EnvironmentSettings, logger: Logger) throws(SettingsError)
        -> (any Service)?
    {
        let exporter = settings.string("OTEL_TRACES_EXPORTER", default: "none")
        switch exporter {
        case "none": return nil
        case "otlp": break
        default: throw SettingsError("OTEL_TRACES_EXPORTER must be none or otlp, not \(exporter)")
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
}
