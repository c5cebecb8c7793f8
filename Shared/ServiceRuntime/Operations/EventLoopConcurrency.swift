import NIOCore
import NIOPosix

/// Where a service's Swift tasks run: on NIO's event-loop threads (the default) or on Swift's own pool.
///
/// An HTTP service hops between NIO's event loops (socket reads and writes) and Swift's pool (handlers, awaited
/// continuations) several times per request. On two cores those hops cost more than the work between them
/// (`perf` of ingest: a fifth of its time in the kernel's scheduler). Running tasks on the event loops removes
/// them. The work on these threads must not block, which holds for every service here: blocking librdkafka calls
/// run on threads of their own.
public enum EventLoopConcurrency {
    /// Makes NIO's singleton event loops Swift's global executor unless `SWIFT_TASKS_ON_EVENT_LOOPS` is `false`.
    /// Call it first in `main`, before any task is started; returns whether the event loops took over. A value
    /// other than `true` or `false` stops the service.
    @discardableResult
    public static func install(_ settings: EnvironmentSettings) throws(SettingsError) -> Bool {
        guard try self.isRequested(settings) else { return false }
        return NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }

    /// Whether the settings ask for tasks on the event loops (`SWIFT_TASKS_ON_EVENT_LOOPS`, default `true`).
    public static func isRequested(_ settings: EnvironmentSettings) throws(SettingsError) -> Bool {
        try settings.bool("SWIFT_TASKS_ON_EVENT_LOOPS", default: true)
    }
}
