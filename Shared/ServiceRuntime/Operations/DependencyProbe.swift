public import Logging
public import ServiceLifecycle

/// Checks a service's dependencies every `interval` and records each as a ``Readiness`` condition, so
/// `/ready` says not ready while the broker or PostgreSQL is down and ready again once it is back, without
/// any traffic (an orchestrator stops sending requests meanwhile).
public struct DependencyProbe: Service {
    /// A named check: true when the dependency answered.
    public struct Check: Sendable {
        public var name: String
        public var isUp: @Sendable () async -> Bool

        public init(_ name: String, isUp: @escaping @Sendable () async -> Bool) {
            self.name = name
            self.isUp = isUp
        }

        /// A dependency that is up when `probe` returns within `deadline` (a probe that hangs, as a query on a
        /// connection cut by a server crash can, is abandoned: the dependency is down).
        public init(_ name: String, within deadline: Duration, probe: @escaping @Sendable () async throws -> Void) {
            self.init(name) { (try? await withAbandoningDeadline(deadline, probe)) != nil }
        }
    }

    let checks: [Check]
    let readiness: Readiness
    let interval: Duration
    let logger: Logger

    /// Creates the probe. Until its first round, every check counts as failing: a service is ready only once each
    /// dependency answered (with its conditions unset, `/ready` said yes before the first round, and a test's first
    /// request reached customer-api before its API keys were read).
    public init(checks: [Check], readiness: Readiness, interval: Duration = .seconds(2), logger: Logger) {
        self.checks = checks
        self.readiness = readiness
        self.interval = interval
        self.logger = logger
        for check in checks { readiness.set(false, condition: check.name) }
    }

    public func run() async throws {
        var first = true
        await runPeriodically(every: self.interval, immediately: true) {
            await self.probeOnce(first: first)
            first = false
        }
    }

    /// Runs every check once and records the results. A change is logged; in the first round, a dependency that is
    /// down (it counted as failing before, so an answer is no news).
    public func probeOnce(first: Bool = false) async {
        for check in self.checks {
            let up = await check.isUp()
            let wasDown = self.readiness.failingConditions.contains(check.name)
            self.readiness.set(up, condition: check.name)
            if first ? !up : up == wasDown {
                self.logger.log(level: up ? .notice : .warning, "dependency \(check.name) is \(up ? "back" : "down")")
            }
        }
    }
}
