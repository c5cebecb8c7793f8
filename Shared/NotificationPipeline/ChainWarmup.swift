public import JWSVerification
public import Logging
public import ServiceLifecycle
import ServiceRuntime
public import X509

/// The doors' warm start: validates the configured intermediates (``TrustSettings/intermediates``) up to the roots
/// in every verifier as the service starts (milliseconds), so Apple's first notification after a start (every pod an
/// autoscaler adds) or a leaf rotation costs one leaf check and no new-chain budget. An intermediate that does not
/// validate stops the service: a bad setting is found at start.
public struct ChainWarmup: Service {
    let verifiers: [SignedDataVerifier]
    let intermediates: [Certificate]
    let logger: Logger

    public init(verifiers: [SignedDataVerifier], intermediates: [Certificate], logger: Logger) {
        self.verifiers = verifiers
        self.intermediates = intermediates
        self.logger = logger
    }

    /// Validates every intermediate in every verifier (within milliseconds); throws a settings error naming the one
    /// that does not validate.
    public func warm() async throws {
        for verifier in self.verifiers {
            do {
                try await verifier.warm(intermediates: self.intermediates)
            } catch {
                throw SettingsError("APPSTORE_INTERMEDIATE_CERTIFICATES: \(error)")
            }
        }
        self.logger.info("chain cache warmed", metadata: ["intermediates": "\(self.intermediates.count)"])
    }

    /// Warms at start, then waits for shutdown (a failure ends the service group: the service stops).
    public func run() async throws {
        try await self.warm()
        try await gracefulShutdown()
    }
}
