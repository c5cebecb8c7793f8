import AppStoreModels
import Foundation

/// A token bucket (GCRA form) for the App Store's per-app rate limit, in this replica's share.
///
/// `acquire` grants a token, sleeping at most `maximumWait`; when the next token is further away it grants
/// nothing and says when to come back, so callers reschedule instead of holding their partition. A 429
/// pauses the whole bucket until Apple's `Retry-After`.
actor TokenBucket {
    /// What `acquire` decided.
    enum Grant: Equatable {
        case granted
        /// No token before this instant.
        case deferred(until: Date)
    }

    private let interval: TimeInterval
    private let tolerance: TimeInterval
    /// The theoretical arrival time of the next token.
    private var nextArrival: Date

    /// A bucket of `ratePerSecond` tokens a second holding at most `burst`.
    init(ratePerSecond: Double, burst: Int = 1, now: Date = Date()) {
        self.interval = 1 / max(ratePerSecond, 0.001)
        self.tolerance = Double(max(burst, 1) - 1) * self.interval
        self.nextArrival = now
    }

    /// Takes a token, waiting up to `maximumWait` for it.
    func acquire(maximumWait: Duration) async -> Grant {
        let now = Date()
        let earliest = max(now, self.nextArrival.addingTimeInterval(-self.tolerance))
        let wait = earliest.timeIntervalSince(now)
        guard wait <= maximumWait.timeInterval else {
            return .deferred(until: earliest)
        }
        self.nextArrival = max(self.nextArrival, now).addingTimeInterval(self.interval)
        if wait > 0 { try? await Task.sleep(for: .milliseconds(Int64((wait * 1000).rounded(.up)))) }
        return .granted
    }

    /// No token before `date` (Apple said 429, Retry-After `date`).
    func pause(until date: Date) {
        self.nextArrival = max(self.nextArrival, date.addingTimeInterval(self.tolerance))
    }
}
