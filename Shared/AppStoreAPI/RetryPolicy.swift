public import Foundation
import RateAndRetry

/// When a failed App Store Server API call is tried again inside the client.
///
/// 429 waits until the instant `Retry-After` names; 5xx, timeouts, transport failures and Apple's retryable
/// codes back off exponentially with jitter; anything else fails at once. A wait longer than
/// ``maximumDelay`` is not slept: the error is thrown so a caller that must not block (refund-resolver)
/// can reschedule instead. `maximumAttempts` of 1 turns inline retrying off altogether.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included.
    public var maximumAttempts: Int
    /// The first back-off; doubled after every failure.
    public var baseDelay: Duration
    /// The longest single wait the client sleeps.
    public var maximumDelay: Duration

    public init(
        maximumAttempts: Int = 4, baseDelay: Duration = .milliseconds(200), maximumDelay: Duration = .seconds(10)
    ) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
    }

    /// No inline retries: every failure is returned to the caller.
    public static let none = RetryPolicy(maximumAttempts: 1)

    /// How long to wait before attempt `attempt + 1` after `error`, or nil to give up now.
    /// `jitter` is a number in [0, 1) (random in production, fixed in tests).
    public func delay(after error: AppStoreAPIError, attempt: Int, now: Date, jitter: Double) -> Duration? {
        guard error.isRetryable, attempt < self.maximumAttempts else { return nil }
        if let retryAfter = error.retryAfter {
            let wait = Duration.milliseconds(max(0, Int64((retryAfter.timeIntervalSince(now) * 1000).rounded(.up))))
            return wait <= self.maximumDelay ? wait : nil
        }
        return Backoff(base: self.baseDelay, maximum: self.maximumDelay).delay(attempt: attempt, jitter: jitter)
    }
}
