import Foundation
import RateAndRetry
import Synchronization

/// A token bucket per key (an API key in customer-api, a client's source in the doors' new-chain budgets): a key
/// may take `ratePerSecond` tokens a second on average, with bursts up to one second's worth. Refusals say when the
/// next token would be there. Synchronous under a lock (no actor hop on every request); the arithmetic is
/// RateAndRetry's ``TokenBucket``.
///
/// At most `maximumKeys` keys are tracked, so keys an attacker chooses cannot grow it without bound: when a new key
/// finds it full, the full buckets (the same as new ones) are forgotten (at most once a second); if none is, the new
/// key shares one overflow bucket until some are.
public final class KeyedRateLimiter: Sendable {
    private let buckets = Mutex<(all: [String: TokenBucket], prunedAt: Double)>(([:], -.infinity))
    /// The instant the limiter's seconds count from.
    private let origin = ContinuousClock.now
    private let maximumKeys: Int
    /// The key of the bucket new keys share while the limiter is full of busy ones.
    static let overflowKey = "\u{0}overflow"

    /// A limiter tracking at most `maximumKeys` keys.
    public init(maximumKeys: Int = 100_000) {
        self.maximumKeys = max(maximumKeys, 1)
    }

    /// Takes a token for the key; returns nil when granted, else the seconds until one is available.
    public func take(keyId: String, ratePerSecond: Int, now: ContinuousClock.Instant = .now) -> Double? {
        let rate = max(ratePerSecond, 1)
        let seconds = Self.seconds(now - self.origin)
        return self.buckets.withLock { state -> Double? in
            var key = keyId
            if state.all[key] == nil, state.all.count >= self.maximumKeys {
                // Forgetting full buckets reads them all: at most once a second, so new keys cannot make every
                // request pay for a scan.
                if seconds - state.prunedAt >= 1 {
                    state.all = state.all.filter { !$0.value.isFull(now: seconds) }
                    state.prunedAt = seconds
                }
                if state.all.count >= self.maximumKeys { key = Self.overflowKey }
            }
            var bucket =
                state.all[key].flatMap { $0.interval == 1 / Double(rate) ? $0 : nil }
                ?? TokenBucket(ratePerSecond: Double(rate), burst: rate, now: seconds)
            defer { state.all[key] = bucket }
            if bucket.take(now: seconds) != nil { return nil }
            return bucket.wait(now: seconds)
        }
    }

    /// How many keys are tracked now.
    public var trackedKeys: Int { self.buckets.withLock { $0.all.count } }

    /// A duration in seconds, with its fraction.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
