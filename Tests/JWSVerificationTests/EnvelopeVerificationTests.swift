import AppStoreModels
import AppStoreSigning
import Crypto
import Foundation
import JWSVerification
import TestSupport
import Testing

/// The edge check ingest makes (`verifyNotificationEnvelope` of a notification its admission already split and
/// decoded): the outer JWS's chain, signature, container, app and environment, caught exactly like the full
/// verification catches them, while what only nested JWS get wrong passes the edge.
@Suite struct EnvelopeVerificationTests {
    let fixtures: SignedFixtures

    init() throws {
        self.fixtures = try SignedFixtures()
    }

    /// The error kind the envelope check of `jws` ends with (nil: it verified).
    func envelopeError(_ jws: String, verifier: SignedDataVerifier? = nil) async throws -> VerificationError.Kind? {
        let verifier = try verifier ?? self.fixtures.verifier()
        let notification = try UnverifiedJWS(jws).decodeNotification()
        return await verificationError { _ = try await verifier.verifyNotificationEnvelope(notification) }?.kind
    }

    @Test func aValidNotificationPassesAndIsReturnedDecoded() async throws {
        let verifier = try self.fixtures.verifier()
        let notification = try UnverifiedJWS(self.fixtures.signedNotification()).decodeNotification()
        #expect(!verifier.knowsChain(of: notification))
        let payload = try await verifier.verifyNotificationEnvelope(notification)
        #expect(payload.notificationUUID == SignedFixtures.notification().notificationUUID)
        #expect(verifier.knowsChain(of: notification), "a verified chain is cached")
        #expect(
            try await verifier.verifyNotificationEnvelope(notification) == payload, "the cached chain verifies again")
    }

    @Test func aTamperedPayloadFailsTheSignatureEvenWithItsChainCached() async throws {
        let verifier = try self.fixtures.verifier()
        let valid = try self.fixtures.signedNotification()
        #expect(try await self.envelopeError(valid, verifier: verifier) == nil)
        var payload = SignedFixtures.notification()
        payload.data?.status = .revoked
        let other = try self.fixtures.signer.sign(payload)
        let parts = valid.split(separator: ".")
        let tampered = [parts[0], other.split(separator: ".")[1], parts[2]].joined(separator: ".")
        #expect(try await self.envelopeError(tampered, verifier: verifier) == .signature)
    }

    @Test func aSignatureByAnotherKeyIsASignatureError() async throws {
        let jws = try AppStoreSigner(signingKey: P256.Signing.PrivateKey(), header: .init(x5c: self.fixtures.pki.x5c))
            .sign(SignedFixtures.notification())
        #expect(try await self.envelopeError(jws) == .signature)
    }

    @Test func aChainToAnotherRootIsAChainError() async throws {
        #expect(try await self.envelopeError(SignedFixtures().signedNotification()) == .chain)
    }

    @Test func anotherEnvironmentAndTwoContainersAreRefused() async throws {
        #expect(
            try await self.envelopeError(self.fixtures.signedNotification(environment: .production)) == .environment)
        var payload = SignedFixtures.notification()
        var summary = Summary()
        summary.bundleId = SignedFixtures.bundleId
        payload.summary = summary
        #expect(try await self.envelopeError(self.fixtures.signer.sign(payload)) == .format)
    }

    @Test func aNestedTransactionOfAnotherAppPassesTheEdgeButNotTheFullVerification() async throws {
        let jws = try self.fixtures.signer.signNotification(
            SignedFixtures.notification(), transaction: SignedFixtures.transaction(bundleId: "com.other.app"))
        #expect(try await self.envelopeError(jws) == nil)
        let verifier = try self.fixtures.verifier()
        #expect(await verificationError { _ = try await verifier.verifyNotification(jws) }?.kind == .appIdentifier)
    }

    @Test func onlyThePayloadSegmentIsReadForRouting() throws {
        let transaction = try self.fixtures.signer.sign(SignedFixtures.transaction())
        let parts = transaction.split(separator: ".")
        let headerless = ["e30", parts[1], parts[2]].joined(separator: ".")  // "{}": no alg, no x5c
        #expect(
            try UnverifiedJWS.decodePayload(of: headerless, as: JWSTransactionDecodedPayload.self).originalTransactionId
                == "2000000000000001")
        #expect(throws: VerificationError.self) {
            try UnverifiedJWS.decodePayload(of: "a.b", as: JWSTransactionDecodedPayload.self)
        }
    }
}
