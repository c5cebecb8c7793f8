import RateAndRetry
import ServiceRuntime
import Testing

/// The one back-off and the one token bucket of the project.
@Suite struct RateAndRetryTests {
    @Test func backOffDoublesFromItsBaseToItsMaximum() {
        let backoff = Backoff(base: .milliseconds(100), maximum: .seconds(1))
        #expect(
            (1...6).map { backoff.delay(attempt: $0) } == [
                .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1),
                .seconds(1),
            ])
        #expect(
            backoff.delay(attempt: 1_000) == .seconds(1),
            "a huge attempt count neither overflows nor exceeds the maximum")
        #expect(backoff.delay(attempt: 3, jitter: 0) == .milliseconds(200), "equal jitter: half fixed")
        #expect(backoff.delay(attempt: 3, jitter: 0.5) == .milliseconds(300))
        #expect(backoff.delay(attempt: 3, jitter: 7) == .milliseconds(400), "jitter is clamped to [0, 1]")
    }

    @Test func aBucketGrantsItsBurstThenOneTokenPerInterval() {
        var bucket = TokenBucket(ratePerSecond: 10, burst: 3, now: 100)
        #expect((0..<3).map { _ in bucket.take(now: 100) } == [0, 0, 0])
        #expect(bucket.take(now: 100) == nil, "the burst is spent")
        #expect(abs(bucket.wait(now: 100) - 0.1) < 1e-9)
        #expect(
            bucket.take(now: 100, maximumWait: 0.2).map { abs($0 - 0.1) < 1e-9 } == true,
            "granted with the wait to sleep")
        #expect(bucket.take(now: 100.35) == 0, "tokens came back with time")
    }

    @Test func aPauseHoldsEveryTokenBackUntilItEnds() {
        var bucket = TokenBucket(ratePerSecond: 100, now: 0)
        bucket.pause(until: 5)
        #expect(bucket.take(now: 1, maximumWait: 1) == nil)
        #expect(abs(bucket.wait(now: 1) - 4) < 1e-9)
        #expect(bucket.take(now: 5) == 0)
    }

    @Test func theKeyedLimiterGivesEachKeyOneSecondOfBurst() {
        let limiter = KeyedRateLimiter()
        let now = ContinuousClock.now
        #expect((0..<5).allSatisfy { _ in limiter.take(keyId: "a", ratePerSecond: 5, now: now) == nil })
        let refusal = limiter.take(keyId: "a", ratePerSecond: 5, now: now)
        #expect(refusal.map { abs($0 - 0.2) < 1e-6 } == true, "the next token is a fifth of a second away")
        #expect(limiter.take(keyId: "b", ratePerSecond: 5, now: now) == nil, "keys do not share a bucket")
        #expect(limiter.take(keyId: "a", ratePerSecond: 5, now: now + .milliseconds(250)) == nil)
    }
}
