import AppStoreModels
import JWSVerification
import NotificationPipeline
import ServiceRuntime

/// Verifies a notification's outer JWS at the edge, before anything is produced: chain to a configured root,
/// Apple's marker OIDs, the ES256 signature, app and environment (the chain-verifier still verifies
/// everything, nested JWS included, because other producers can write to the raw topic). Chains not seen before
/// are validated within their source's ``NewChainBudget`` (beyond it: 503, which Apple retries).
struct EdgeVerification: Sendable {
    let verifiers: [Environment: SignedDataVerifier]
    let newChains: NewChainBudget
    /// The time the budget is counted at (a test freezes it, so its burst does not refill while the test runs).
    let clock: @Sendable () -> ContinuousClock.Instant

    init(
        verifiers: [Environment: SignedDataVerifier], newChainsPerSecond: Int,
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.verifiers = verifiers
        self.newChains = NewChainBudget(perSecond: newChainsPerSecond)
        self.clock = clock
    }

    /// Verifies `admitted`'s signed payload; a forgery is a 403 rejection naming the failed check, a check that could
    /// not be made (an OCSP responder that did not answer) a 503 that Apple retries: no verdict is no forgery.
    func verify(_ admitted: AdmittedNotification, source: @autoclosure () -> String) async throws(AdmissionRejection) {
        // A parked notification (an app or environment not configured) is checked for Apple's signature alone, with
        // any verifier: they share the roots.
        guard
            let verifier = self.verifiers[admitted.environment]
                ?? (admitted.parked == nil ? nil : self.verifiers.anyAppStoreVerifier)
        else {
            throw AdmissionRejection(
                status: 400, code: "unknown-environment", message: "no verifier for \(admitted.environment.rawValue)")
        }
        if let wait = self.newChains.admit(
            known: verifier.knowsChain(of: admitted.notification), source: source(), now: self.clock())
        {
            throw AdmissionRejection(
                status: 503, code: "verification-busy",
                message: "too many certificate chains not seen before; retry in \(Int(wait.rounded(.up))) s")
        }
        do {
            if admitted.parked == nil {
                _ = try await verifier.verifyNotificationEnvelope(admitted.notification)
            } else {
                _ = try await verifier.verifyNotificationSignatureOnly(admitted.notification)
            }
        } catch  where error.isRetryable {
            throw AdmissionRejection(
                status: 503, code: "verification-unavailable", message: "\(error.kind.rawValue): \(error.detail)")
        } catch {
            throw AdmissionRejection(
                status: 403, code: "verification-failed", message: "\(error.kind.rawValue): \(error.detail)")
        }
    }
}
