import JWSVerification
import ServiceRuntime

/// How many certificate chains not seen before a door to the App Store may validate per second **per source**
/// (ingest's `INGEST_NEW_CHAINS_PER_SECOND`, retention-messaging's `RETENTION_NEW_CHAINS_PER_SECOND`; the source is
/// the peer, or behind `HTTP_TRUSTED_PROXIES` the client they name, ``TrustedProxies``): a chain seen before is
/// cached and costs one signature check, and a chain under an intermediate validated before costs one leaf check
/// (both are "known" and free), so forgeries made with ever new chains cannot take the CPU the genuine path needs,
/// and one source's flood empties only its own budget, never Apple's. Only valid chains enter the caches, so
/// forgeries never evict the genuine one. At most ``trackedSources`` sources are tracked (full budgets are forgotten
/// first; beyond, new sources share one budget).
public struct NewChainBudget: Sendable {
    /// New chains a second.
    public let perSecond: Int
    /// How many sources' budgets are kept at most.
    public static let trackedSources = 10_000
    private let limiter = KeyedRateLimiter(maximumKeys: Self.trackedSources)

    public init(perSecond: Int) {
        self.perSecond = perSecond
    }

    /// Nil when `known` (the verifier has the chain cached, or knows its intermediate) or when `source`'s budget
    /// has room for one more new chain now; else the seconds until it has (answer 503 with them).
    /// (`source` and `now` are worked out only when the chain is new: the known chains of the hot path never pay.)
    public func admit(
        known: Bool, source: @autoclosure () -> String, now: @autoclosure () -> ContinuousClock.Instant = .now
    ) -> Double? {
        known ? nil : self.limiter.take(keyId: source(), ratePerSecond: self.perSecond, now: now())
    }
}
