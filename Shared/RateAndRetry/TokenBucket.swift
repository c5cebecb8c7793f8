/// A token bucket in its GCRA form: the one of the project (customer-api's per-key rates and key look-up budget,
/// ingest's budget of new certificate chains, refund-resolver's share of Apple's per-app rate).
///
/// A bucket of `ratePerSecond` tokens a second holding at most `burst` keeps one number, the theoretical arrival
/// time of the next token. Times are seconds on the caller's clock (monotonic or wall), so one arithmetic
/// serves callers that wait by `ContinuousClock` and callers that are told `Retry-After` as a date.
public struct TokenBucket: Sendable, Hashable {
    /// Seconds between tokens.
    public let interval: Double
    /// How far ahead of its arrival a token may be taken: the burst, in seconds.
    let tolerance: Double
    /// When the next token arrives, in the caller's seconds.
    private var nextArrival: Double

    /// A bucket of `ratePerSecond` tokens a second holding at most `burst`, full at `now`.
    public init(ratePerSecond: Double, burst: Int = 1, now: Double) {
        self.interval = 1 / max(ratePerSecond, 0.001)
        self.tolerance = Double(max(burst, 1) - 1) * self.interval
        self.nextArrival = now
    }

    /// Seconds from `now` until a token can be taken (0 when one can be taken now). Differences below a
    /// nanosecond are rounding of the arithmetic (a burst of `n` is `n - 1` intervals of tolerance), not waits.
    public func wait(now: Double) -> Double {
        let wait = self.nextArrival - self.tolerance - now
        return wait > 1e-9 ? wait : 0
    }

    /// Takes a token if one can be taken within `maximumWait` seconds of `now`, and returns how long the caller
    /// must wait for it (0: at once); nil, taking nothing, when the next token is further away.
    public mutating func take(now: Double, maximumWait: Double = 0) -> Double? {
        let wait = self.wait(now: now)
        guard wait <= maximumWait else { return nil }
        self.nextArrival = max(self.nextArrival, now) + self.interval
        return wait
    }

    /// Whether the bucket holds all its tokens at `now`, so it is the same as a new one (a keyed limiter may forget it).
    public func isFull(now: Double) -> Bool {
        self.nextArrival <= now
    }

    /// No token before `time` (a 429's `Retry-After`).
    public mutating func pause(until time: Double) {
        self.nextArrival = max(self.nextArrival, time + self.tolerance)
    }
}
