import Foundation
import Synchronization

/// A token bucket per key (an API key in customer-api, the new-chain budget in ingest): a key may take
/// `ratePerSecond` tokens a second on average, with bursts up to one second's worth. Refusals say when the
/// next token would be there. Synchronous under a lock (no actor hop on every request).
public final class KeyedRateLimiter: Sendable {
    private let buckets = Mutex<[String: (tokens: Double, updated: ContinuousClock.Instant)]>([:])

    public init() {}

    /// Takes a token for the key; returns nil when granted, else the seconds until one is available.
    public func take(keyId: String, ratePerSecond: Int, now: ContinuousClock.Instant = .now) -> Double? {
        let rate = Double(max(ratePerSecond, 1))
        return self.buckets.withLock { buckets -> Double? in
            var bucket = buckets[keyId] ?? (tokens: rate, updated: now)
            bucket.tokens = min(rate, bucket.tokens + rate * max(0, Self.seconds(now - bucket.updated)))
            bucket.updated = max(now, bucket.updated)
            defer { buckets[keyId] = bucket }
            guard bucket.tokens >= 1 else { return (1 - bucket.tokens) / rate }
            bucket.tokens -= 1
            return nil
        }
    }

    /// A duration in seconds, with its fraction.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
