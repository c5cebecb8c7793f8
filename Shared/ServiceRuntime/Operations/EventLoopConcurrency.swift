import NIOCore
import NIOPosix
public import Prometheus

/// Where a service's Swift tasks run: on NIO's event-loop threads (the default) or on Swift's own pool.
///
/// An HTTP service hops between NIO's event loops (socket reads and writes) and Swift's pool (handlers, awaited
/// continuations) several times per request. On two cores those hops cost more than the work between them
/// (`perf` of ingest: a fifth of its time in the kernel's scheduler). Running tasks on the event loops removes
/// them. The work on these threads must not block, which holds for every service here: blocking librdkafka calls
/// run on threads of their own.
public enum EventLoopConcurrency {
    /// Makes NIO's singleton event loops Swift's global executor unless `SWIFT_TASKS_ON_EVENT_LOOPS` is `false`
    /// (``EventLoopGlobalExecutor``: jobs run as the generic executor runs them, so a hop between nonisolated
    /// functions queues nothing), and shows on `registry`'s `/metrics` where the tasks run:
    /// `swift_tasks_on_event_loops` 1 when the event loops took over, 0 on Swift's pool (asked for with `false`, or a
    /// runtime without the hook). Call it first in `main`, before any task is started. A value other than `true` or
    /// `false` stops the service.
    public static func install(_ settings: EnvironmentSettings, registry: PrometheusCollectorRegistry)
        throws(SettingsError)
    {
        let onEventLoops = try self.isRequested(settings) && EventLoopGlobalExecutor.install()
        registry.makeGauge(
            name: "swift_tasks_on_event_loops",
            help: "1: Swift tasks run on NIO's event loops (SWIFT_TASKS_ON_EVENT_LOOPS); 0: on Swift's pool"
        ).set(to: onEventLoops ? 1.0 : 0.0)
    }

    /// Whether the settings ask for tasks on the event loops (`SWIFT_TASKS_ON_EVENT_LOOPS`, default `true`).
    public static func isRequested(_ settings: EnvironmentSettings) throws(SettingsError) -> Bool {
        try settings.bool("SWIFT_TASKS_ON_EVENT_LOOPS", default: true)
    }
}
