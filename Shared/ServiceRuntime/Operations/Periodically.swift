import ServiceLifecycle

/// Runs `body` every `interval` (first at once when `immediately`, else after one interval) until graceful
/// shutdown or cancellation: the loop of the services' periodic jobs (the reconciler, the renewal-time sweep).
/// `body` handles its own failures; a shutdown during the pause ends the loop at once.
public func runPeriodically(every interval: Duration, immediately: Bool, _ body: () async -> Void) async {
    var first = true
    while !Task.isShuttingDownGracefully && !Task.isCancelled {
        if !(first && !immediately) { await body() }
        first = false
        do {
            try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        } catch {
            return
        }
    }
}
