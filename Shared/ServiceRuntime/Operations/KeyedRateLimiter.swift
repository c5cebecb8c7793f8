import Foundation
import RateAndRetry
import Synchronization

/// A token bucket per key (an API key in customer-api, the new-chain budget in ingest): a key may take
/// `ratePerSecond` tokens a second on average, with bursts up to one second's worth. Refusals say when the
/// next token would be there. Synchronous under a lock (no actor hop on every request); the arithmetic is
/// RateAndRetry's ``TokenBucket``.
public final class KeyedRateLimiter: Sendable {
    private let buckets = Mutex<[String: TokenBucket]>([:])
    /// The instant the limiter's seconds count from.
    private let origin = ContinuousClock.now

    public init() {}

    /// Takes a token for the key; returns nil when granted, else the seconds until one is available.
    public func take(keyId: String, ratePerSecond: Int, now: ContinuousClock.Instant = .now) -> Double? {
        let rate = max(ratePerSecond, 1)
        let seconds = Self.seconds(now - self.origin)
        return self.buckets.withLock { buckets -> Double? in
            var bucket =
                buckets[keyId].flatMap { $0.interval == 1 / Double(rate) ? $0 : nil }
                ?? TokenBucket(ratePerSecond: Double(rate), burst: rate, now: seconds)
            defer { buckets[keyId] = bucket }
            if bucket.take(now: seconds) != nil { return nil }
            return bucket.wait(now: seconds)
        }
    }

    /// A duration in seconds, with its fraction.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
