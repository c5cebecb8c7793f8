import AppStoreModels
import AppStoreSigning
import Foundation
import JWSVerification
import Logging
import NotificationPipeline
import ServiceRuntime
import TestSupport
import Testing

/// The doors' warm start and its setting: the built-in intermediate with Apple's root, the configured ones with roots
/// of one's own; one that does not validate stops the service.
@Suite struct ChainWarmupTests {
    @Test func theDefaultsWarmApplesIntermediateOnlyUnderApplesRoot() throws {
        #expect(TrustSettings().warmIntermediates == AppleIntermediateCertificates.all)
        var own = TrustSettings()
        own.trustedRoots = [try TestPKI().root]
        #expect(own.warmIntermediates.isEmpty, "Apple's intermediate cannot chain to a root of one's own")
        #expect(throws: (any Error).self) {
            try TrustSettings(EnvironmentSettings(["APPSTORE_INTERMEDIATE_CERTIFICATES": "/nonexistent.der"]))
        }
    }

    @Test func anIntermediateThatDoesNotValidateStopsTheService() async throws {
        let fixtures = try SignedFixtures()
        let verifier = try fixtures.verifier()
        let logger = Logger(label: "warmup")
        try await ChainWarmup(verifiers: [verifier], intermediates: [fixtures.pki.intermediate], logger: logger).warm()
        #expect(verifier.knownIssuerCount == 1)
        await #expect(throws: SettingsError.self) {
            try await ChainWarmup(verifiers: [verifier], intermediates: [try TestPKI().intermediate], logger: logger)
                .warm()
        }
    }
}
