import AppStoreModels
import JWSVerification
import ServiceRuntime

/// Verifies a notification's outer JWS at the edge, before anything is produced: chain to a configured root,
/// Apple's marker OIDs, the ES256 signature, app and environment (the chain-verifier still verifies
/// everything, nested JWS included, because other producers can write to the raw topic). Chains seen before
/// are cached and cost one signature check; chains not seen before are validated at most `newChainsPerSecond`
/// a second across the process, so forgeries with ever new chains cannot take the CPU the genuine path needs
/// (beyond the budget: 503, which Apple retries). Only valid chains enter the cache, so forgeries never
/// evict the genuine one.
struct EdgeVerification: Sendable {
    let verifiers: [Environment: SignedDataVerifier]
    let newChainsPerSecond: Int
    let newChains = KeyedRateLimiter()

    /// Verifies `admitted`'s signed payload; a forgery is a 403 rejection naming the failed check.
    func verify(_ admitted: AdmittedNotification) async throws(AdmissionRejection) {
        guard let verifier = self.verifiers[admitted.environment] else {
            throw AdmissionRejection(
                status: 400, code: "unknown-environment", message: "no verifier for \(admitted.environment.rawValue)")
        }
        if !verifier.knowsChain(of: admitted.notification),
            let wait = self.newChains.take(keyId: "new-chains", ratePerSecond: self.newChainsPerSecond)
        {
            throw AdmissionRejection(
                status: 503, code: "verification-busy",
                message: "too many certificate chains not seen before; retry in \(Int(wait.rounded(.up))) s")
        }
        do {
            _ = try await verifier.verifyNotificationEnvelope(admitted.notification)
        } catch {
            throw AdmissionRejection(
                status: 403, code: "verification-failed", message: "\(error.kind.rawValue): \(error.detail)")
        }
    }
}
