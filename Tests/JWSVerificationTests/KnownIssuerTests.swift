import AppStoreModels
import AppStoreSigning
import JWSVerification
import TestSupport
import Testing

/// Chains under an intermediate already validated: a new leaf (Apple's rotation, a new pod's first notification)
/// costs one leaf check and counts as known for the doors' new-chain budgets; the warm start knows the configured
/// intermediates before any chain arrives; nothing else gets in.
@Suite struct KnownIssuerTests {
    /// Whether `signed` (a notification) counts as a known chain, by ``SignedDataVerifier/knowsChain(ofJWS:)``.
    static func knows(_ verifier: SignedDataVerifier, _ signed: String) -> Bool {
        verifier.knowsChain(ofJWS: signed)
    }

    @Test func aNewLeafUnderAValidatedIntermediateIsKnownAndVerifies() async throws {
        let fixtures = try SignedFixtures()
        let verifier = try fixtures.verifier()
        let first = try fixtures.signedNotification()
        #expect(!Self.knows(verifier, first), "nothing validated yet")
        _ = try await verifier.verifyNotification(first)
        #expect(verifier.knownIssuerCount == 1)

        let rotated = AppStoreSigner(pki: try fixtures.pki.rotatingLeaf())
        let next = try rotated.signNotification(SignedFixtures.notification())
        #expect(Self.knows(verifier, next), "a new leaf under the validated intermediate")
        _ = try await verifier.verifyNotification(next)
        #expect(verifier.cachedChainCount == 2 && verifier.knownIssuerCount == 1)
    }

    @Test func aKnownIntermediateLendsNothingToABadLeaf() async throws {
        let fixtures = try SignedFixtures()
        let verifier = try fixtures.verifier()
        _ = try await verifier.verifyNotification(try fixtures.signedNotification())
        // A leaf without Apple's marker, and an expired one, under the same intermediate.
        var unmarked = TestPKI.Options()
        unmarked.leafMarker = nil
        var expired = TestPKI.Options()
        expired.leafNotValidAfter = SignedFixtures.signedDate.date.addingTimeInterval(-1)
        for options in [unmarked, expired] {
            let signer = AppStoreSigner(pki: try fixtures.pki.rotatingLeaf(options))
            await #expect(throws: VerificationError.self) {
                try await verifier.verifyNotification(try signer.signNotification(SignedFixtures.notification()))
            }
        }
        // A forger's leaf carried beside the real intermediate: its signature is not the intermediate's.
        let forger = try TestPKI()
        var x5c = forger.x5c
        x5c[1] = fixtures.pki.x5c[1]
        x5c[2] = fixtures.pki.x5c[2]
        let forged = try AppStoreSigner(signingKey: forger.leafKey, header: .init(x5c: x5c)).signNotification(
            SignedFixtures.notification())
        #expect(Self.knows(verifier, forged), "known for the budget: it costs one leaf check")
        await #expect(throws: VerificationError.self) { try await verifier.verifyNotification(forged) }
        #expect(verifier.cachedChainCount == 1, "no bad chain was cached")
    }

    @Test func warmingKnowsConfiguredIntermediatesAndRefusesOthers() async throws {
        let fixtures = try SignedFixtures()
        let verifier = try fixtures.verifier()
        try await verifier.warm(intermediates: [fixtures.pki.intermediate])
        #expect(verifier.knownIssuerCount == 1)
        let signed = try fixtures.signedNotification()
        #expect(Self.knows(verifier, signed), "known before any chain arrived")
        _ = try await verifier.verifyNotification(signed)

        let stranger = try TestPKI()
        await #expect(throws: VerificationError.self, "an intermediate of another root") {
            try await verifier.warm(intermediates: [stranger.intermediate])
        }
        var unmarked = TestPKI.Options()
        unmarked.intermediateMarker = nil
        let unmarkedPKI = try TestPKI(unmarked)
        let trusting = SignedDataVerifier(
            configuration: try VerifierConfiguration(
                environment: .sandbox, apps: [AppIdentity(bundleId: SignedFixtures.bundleId)],
                trustedRoots: [unmarkedPKI.root]))
        await #expect(throws: VerificationError.self, "an intermediate without Apple's marker") {
            try await trusting.warm(intermediates: [unmarkedPKI.intermediate])
        }
        #expect(trusting.knownIssuerCount == 0)
    }
}
