import AppStoreModels
import AppStoreSigning
import JWSVerification
import TestSupport
import Testing

/// The verified-chain cache: one entry per chain, bounded, and shared by the outer and nested JWS.
@Suite struct ChainCacheTests {
    @Test func oneNotificationWithNestedDataCachesOneChain() async throws {
        let fixtures = try SignedFixtures()
        let verifier = try fixtures.verifier()
        for _ in 0..<5 { _ = try await verifier.verifyNotification(fixtures.signedNotification()) }
        #expect(verifier.cachedChainCount == 1)
    }

    @Test func theCacheIsBounded() async throws {
        // Three PKIs trusted by one verifier whose cache holds two chains.
        let all = try (0..<3).map { _ in try SignedFixtures() }
        let verifier = SignedDataVerifier(
            configuration: try VerifierConfiguration(
                environment: .sandbox, apps: [AppIdentity(bundleId: SignedFixtures.bundleId)],
                trustedRoots: all.map(\.pki.root), chainCacheCapacity: 2))
        for fixtures in all + all {
            _ = try await verifier.verifyNotification(fixtures.signedNotification())
        }
        #expect(verifier.cachedChainCount == 2)
    }
}
