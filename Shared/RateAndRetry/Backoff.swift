/// Exponential back-off: the one of the project (the consumer loop, the outbox relay, the App Store Server API
/// client and refund-resolver's reschedules all wait by it).
///
/// Attempt 1 waits `base`, each further attempt twice as long, never more than `maximum`. With `jitter` (a number
/// in [0, 1), random in production, fixed in tests) the wait is "equal jitter": half the exponential delay fixed,
/// half scaled by the jitter, so replicas that failed together do not retry together.
public struct Backoff: Sendable, Hashable {
    /// The first wait.
    public var base: Duration
    /// The longest wait.
    public var maximum: Duration

    public init(base: Duration, maximum: Duration) {
        self.base = base
        self.maximum = maximum
    }

    /// The wait before retrying after failed attempt `attempt` (1 for the first failure), without jitter.
    public func delay(attempt: Int) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        var full = self.base
        for _ in 0..<exponent {
            full = full * 2
            if full >= self.maximum { return self.maximum }
        }
        return min(full, self.maximum)
    }

    /// The wait with equal jitter: half of ``delay(attempt:)`` plus `jitter` times the other half.
    public func delay(attempt: Int, jitter: Double) -> Duration {
        let full = self.delay(attempt: attempt)
        return full / 2 + full * (min(max(jitter, 0), 1) / 2)
    }
}
