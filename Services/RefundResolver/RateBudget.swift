import AppStoreModels
import Foundation
import RateAndRetry

/// This replica's share of the App Store's per-app rate limit: a ``TokenBucket`` on the wall clock (Apple's
/// `Retry-After` is a date).
///
/// `acquire` grants a token, sleeping at most `maximumWait`; when the next token is further away it grants
/// nothing and says when to come back, so callers reschedule instead of holding their partition. A 429
/// pauses the whole budget until Apple's `Retry-After`.
actor RateBudget {
    /// What `acquire` decided.
    enum Grant: Equatable {
        case granted
        /// No token before this instant.
        case deferred(until: Date)
    }

    private var bucket: TokenBucket

    /// A budget of `ratePerSecond` calls a second, at most `burst` at once.
    init(ratePerSecond: Double, burst: Int = 1, now: Date = Date()) {
        self.bucket = TokenBucket(ratePerSecond: ratePerSecond, burst: burst, now: now.timeIntervalSince1970)
    }

    /// Takes a token, waiting up to `maximumWait` for it.
    func acquire(maximumWait: Duration) async -> Grant {
        let now = Date().timeIntervalSince1970
        guard let wait = self.bucket.take(now: now, maximumWait: maximumWait.timeInterval) else {
            return .deferred(until: Date(timeIntervalSince1970: now + self.bucket.wait(now: now)))
        }
        if wait > 0 { try? await Task.sleep(for: .milliseconds(Int64((wait * 1000).rounded(.up)))) }
        return .granted
    }

    /// No token before `date` (Apple said 429, Retry-After `date`).
    func pause(until date: Date) {
        self.bucket.pause(until: date.timeIntervalSince1970)
    }
}
