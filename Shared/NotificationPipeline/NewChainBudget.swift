import JWSVerification
import ServiceRuntime

/// How many certificate chains not seen before a door to the App Store may validate per second, across the process
/// (ingest's `INGEST_NEW_CHAINS_PER_SECOND`, retention-messaging's `RETENTION_NEW_CHAINS_PER_SECOND`): a chain seen
/// before is cached and costs one signature check, so forgeries made with ever new chains cannot take the CPU the
/// genuine path needs. Only valid chains enter the cache, so forgeries never evict the genuine one.
public struct NewChainBudget: Sendable {
    /// New chains a second.
    public let perSecond: Int
    private let limiter = KeyedRateLimiter()

    public init(perSecond: Int) {
        self.perSecond = perSecond
    }

    /// Nil when `known` (the verifier has the chain cached) or when the budget has room for one more new chain now;
    /// else the seconds until it has (answer 503 with them).
    public func admit(known: Bool, now: ContinuousClock.Instant = .now) -> Double? {
        known ? nil : self.limiter.take(keyId: "new-chains", ratePerSecond: self.perSecond, now: now)
    }
}
