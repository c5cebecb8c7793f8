import AppStoreModels
import AppStoreSigning
import Crypto
import Foundation
import JWSVerification
import TestSupport
import Testing

/// Valid data signed by a generated Apple-shaped PKI, and each way of breaking it a verifier must catch.
@Suite struct ForgeryTests {
    let fixtures: SignedFixtures

    init() throws {
        self.fixtures = try SignedFixtures()
    }

    /// Verifies a notification with the default sandbox verifier and returns the error, if any.
    func error(_ jws: String) async throws -> VerificationError? {
        let verifier = try self.fixtures.verifier()
        return await verificationError { try await verifier.verifyNotification(jws) }
    }

    /// The payload JSON of a valid notification, for re-signing with a broken header.
    func notificationJSON() throws -> [UInt8] {
        let jws = try self.fixtures.signedNotification()
        let segment = jws.split(separator: ".")[1]
        var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Array(Data(base64Encoded: base64)!)
    }

    // MARK: Valid

    @Test func aValidNotificationVerifiesWithItsNestedData() async throws {
        let verifier = try self.fixtures.verifier()
        let verified = try await verifier.verifyNotification(self.fixtures.signedNotification())
        #expect(verified.payload.notificationType == .didRenew)
        #expect(verified.transaction?.originalTransactionId == "2000000000000001")
        #expect(verified.renewalInfo?.autoRenewStatus == .on)
        #expect(verified.payload.data?.signedTransactionInfo != nil)
    }

    // MARK: Certificates and chain

    @Test func aLeafWithoutAppleMarkerIsAChainError() async throws {
        var options = TestPKI.Options()
        options.leafMarker = [1, 2, 840, 113635, 100, 6, 11, 2]
        let forged = try SignedFixtures(options)
        let verifier = SignedDataVerifier(
            configuration: try VerifierConfiguration(
                environment: .sandbox, apps: [AppIdentity(bundleId: SignedFixtures.bundleId)],
                trustedRoots: [forged.pki.root]))
        let error = await verificationError { try await verifier.verifyNotification(forged.signedNotification()) }
        #expect(error?.kind == .chain)
    }

    @Test func anIntermediateWithoutAppleMarkerIsAChainError() async throws {
        var options = TestPKI.Options()
        options.intermediateMarker = nil
        let forged = try SignedFixtures(options)
        let error = await verificationError {
            try await forged.verifier().verifyNotification(forged.signedNotification())
        }
        #expect(error?.kind == .chain)
    }

    @Test func anImpostorRootWithTheSameNameIsAChainError() async throws {
        // Same names as the trusted PKI, different keys; the header even carries the trusted root.
        let impostor = try TestPKI()
        let header = AppStoreSigner.Header(
            x5c: [
                TestPKI.base64DER(impostor.leaf), TestPKI.base64DER(impostor.intermediate),
                TestPKI.base64DER(self.fixtures.pki.root),
            ])
        let jws = try AppStoreSigner(signingKey: impostor.leafKey, header: header).sign(SignedFixtures.notification())
        #expect(try await self.error(jws)?.kind == .chain)
    }

    @Test func aRootCarriedInTheHeaderIsNeverTrusted() async throws {
        let other = try SignedFixtures()
        #expect(try await self.error(other.signer.sign(SignedFixtures.notification()))?.kind == .chain)
    }

    @Test func aLeafExpiredAtSignedDateIsAChainError() async throws {
        var options = TestPKI.Options()
        options.leafNotValidAfter = Date(timeIntervalSince1970: 1_600_000_000)
        let expired = try SignedFixtures(options)
        let error = await verificationError {
            try await expired.verifier().verifyNotification(expired.signedNotification())
        }
        #expect(error?.kind == .chain)
    }

    @Test func aLeafExpiredTodayStillVerifiesAtItsSignedDate() async throws {
        var options = TestPKI.Options()
        options.leafNotValidAfter = Date(timeIntervalSince1970: 1_750_000_000)  // 2025-06-15
        let old = try SignedFixtures(options)
        let jws = try old.signedNotification()
        #expect(try await old.verifier().verifyNotification(jws).payload.notificationType == .didRenew)
        let atNow = try old.verifier(validationTime: .now)
        #expect(await verificationError { try await atNow.verifyNotification(jws) }?.kind == .chain)
        let atFixed = try old.verifier(validationTime: .fixed(Date(timeIntervalSince1970: 1_700_000_000)))
        #expect(await verificationError { try await atFixed.verifyNotification(jws) } == nil)
    }

    @Test func aCachedChainIsRevalidatedOutsideItsValidity() async throws {
        var options = TestPKI.Options()
        options.leafNotValidAfter = Date(timeIntervalSince1970: 1_750_000_000)
        let old = try SignedFixtures(options)
        let verifier = try old.verifier()
        _ = try await verifier.verifyNotification(old.signedNotification())
        #expect(verifier.cachedChainCount == 1)
        // Same header (so a cache hit), but signed after the leaf expired.
        let late = try old.signedNotification(signedDate: Timestamp(millisecondsSince1970: 1_760_000_000_000))
        let error = await verificationError { try await verifier.verifyNotification(late) }
        #expect(error?.kind == .chain)
    }

    @Test(arguments: [2, 4])
    func chainsOfOtherLengthsAreCertificateErrors(count: Int) async throws {
        let pki = self.fixtures.pki
        let x5c = Array((pki.x5c + [TestPKI.base64DER(pki.root)]).prefix(count))
        let jws = try AppStoreSigner(signingKey: pki.leafKey, header: .init(x5c: x5c)).sign(
            SignedFixtures.notification())
        let error = try await self.error(jws)
        #expect(error?.kind == .certificate)
        #expect(error?.detail.contains("exactly 3") == true)
    }

    @Test func aNestedTransactionFromAnotherChainIsAChainError() async throws {
        let other = try SignedFixtures()
        let jws = try self.fixtures.signer.signNotification(
            SignedFixtures.notification(), transaction: SignedFixtures.transaction(),
            renewalInfo: SignedFixtures.renewalInfo(),
            nestedSigner: other.signer)
        let error = try await self.error(jws)
        #expect(error?.kind == .chain)
        #expect(error?.detail.hasPrefix("data.signedTransactionInfo") == true)
    }

    @Test func aNestedRenewalInfoFromAnotherChainIsAChainError() async throws {
        let other = try SignedFixtures()
        var payload = SignedFixtures.notification()
        payload.data?.signedTransactionInfo = try self.fixtures.signer.sign(SignedFixtures.transaction())
        payload.data?.signedRenewalInfo = try other.signer.sign(SignedFixtures.renewalInfo())
        let error = try await self.error(self.fixtures.signer.sign(payload))
        #expect(error?.kind == .chain)
        #expect(error?.detail.hasPrefix("data.signedRenewalInfo") == true)
    }

    // MARK: Header and signature

    @Test(arguments: ["none", "HS256", "ES384", "RS256", "es256"])
    func anyAlgorithmButES256IsAFormatError(alg: String) async throws {
        let header = AppStoreSigner.Header(alg: alg, x5c: self.fixtures.pki.x5c)
        let jws = try self.fixtures.signer.sign(payloadJSON: self.notificationJSON(), header: header)
        #expect(try await self.error(jws)?.kind == .format)
    }

    @Test func aMissingAlgorithmIsAFormatError() async throws {
        let header = AppStoreSigner.Header(alg: nil, x5c: self.fixtures.pki.x5c)
        let jws = try self.fixtures.signer.sign(payloadJSON: self.notificationJSON(), header: header)
        #expect(try await self.error(jws)?.kind == .format)
    }

    @Test func aDEREncodedSignatureIsASignatureError() async throws {
        let jws = try self.fixtures.signer.sign(payloadJSON: self.notificationJSON(), format: .der)
        let error = try await self.error(jws)
        #expect(error?.kind == .signature)
        #expect(error?.detail.contains("DER") == true)
    }

    @Test func aTamperedPayloadIsASignatureError() async throws {
        let valid = try self.fixtures.signedNotification()
        var payload = SignedFixtures.notification()
        payload.data?.status = .revoked
        let forgedPayload = try self.fixtures.signer.signNotification(
            payload, transaction: SignedFixtures.transaction(), renewalInfo: SignedFixtures.renewalInfo())
        let parts = valid.split(separator: ".")
        let tampered = [parts[0], forgedPayload.split(separator: ".")[1], parts[2]].joined(separator: ".")
        #expect(try await self.error(tampered)?.kind == .signature)
    }

    @Test func aSignatureByAnotherKeyIsASignatureError() async throws {
        let header = AppStoreSigner.Header(x5c: self.fixtures.pki.x5c)
        let jws = try AppStoreSigner(signingKey: P256.Signing.PrivateKey(), header: header).sign(
            SignedFixtures.notification())
        #expect(try await self.error(jws)?.kind == .signature)
    }

    @Test func aPayloadThatIsNotJSONIsAFormatError() async throws {
        let jws = try self.fixtures.signer.sign(payloadJSON: Array("not json".utf8))
        #expect(try await self.error(jws)?.kind == .format)
    }

    @Test func aPayloadWithAWronglyTypedFieldIsAFormatError() async throws {
        let jws = try self.fixtures.signer.sign(
            payloadJSON: Array(#"{"notificationType":"TEST","signedDate":"yesterday"}"#.utf8))
        let error = try await self.error(jws)
        #expect(error?.kind == .format)
        #expect(error?.detail.contains("signedDate") == true)
    }

    @Test func aHeaderThatIsNotJSONIsAFormatError() async throws {
        let valid = try self.fixtures.signedNotification()
        let parts = valid.split(separator: ".")
        let jws = [AppStoreSigner.base64URL(Array("{nope".utf8))[...], parts[1], parts[2]].joined(separator: ".")
        #expect(try await self.error(jws)?.kind == .format)
    }

    // MARK: App, environment and consistency

    @Test func aNotificationForAnotherEnvironmentIsAnEnvironmentError() async throws {
        let jws = try self.fixtures.signedNotification(environment: .production)
        #expect(try await self.error(jws)?.kind == .environment)
    }

    @Test func aNestedTransactionOfAnotherAppIsAnAppIdentifierError() async throws {
        let jws = try self.fixtures.signer.signNotification(
            SignedFixtures.notification(), transaction: SignedFixtures.transaction(bundleId: "com.other.app"))
        let error = try await self.error(jws)
        #expect(error?.kind == .appIdentifier)
        #expect(error?.detail.hasPrefix("data.signedTransactionInfo") == true)
    }

    @Test func aNestedTransactionOfAnotherEnvironmentIsAnEnvironmentError() async throws {
        let jws = try self.fixtures.signer.signNotification(
            SignedFixtures.notification(), transaction: SignedFixtures.transaction(environment: .production))
        #expect(try await self.error(jws)?.kind == .environment)
    }

    @Test func aProductionTransactionVerifiesWithoutAnAppAppleIdButAProductionNotificationNeedsOne() async throws {
        // Transactions have no appAppleId field, so Production cannot require it of them (found by appstore-sim).
        let verifier = try self.fixtures.verifier(environment: .production)
        let transaction = try self.fixtures.signer.sign(SignedFixtures.transaction(environment: .production))
        #expect(try await verifier.verifyTransaction(transaction).environment == .production)
        var payload = SignedFixtures.notification(environment: .production)
        payload.data?.appAppleId = nil
        let error = await verificationError {
            try await verifier.verifyNotification(self.fixtures.signer.sign(payload))
        }
        #expect(error?.kind == .appIdentifier)
    }

    @Test func renewalInfoOfAnotherSubscriptionIsAFormatError() async throws {
        var renewal = SignedFixtures.renewalInfo()
        renewal.originalTransactionId = "999"
        let jws = try self.fixtures.signer.signNotification(
            SignedFixtures.notification(), transaction: SignedFixtures.transaction(), renewalInfo: renewal)
        #expect(try await self.error(jws)?.kind == .format)
    }

    @Test func aNotificationWithTwoContainersIsAFormatError() async throws {
        var payload = SignedFixtures.notification()
        var summary = Summary()
        summary.bundleId = SignedFixtures.bundleId
        payload.summary = summary
        #expect(try await self.error(self.fixtures.signer.sign(payload))?.kind == .format)
    }

    @Test func anUnknownNotificationTypeVerifiesAndKeepsItsRawValue() async throws {
        var payload = SignedFixtures.notification()
        payload.rawNotificationType = "SOMETHING_APPLE_ADDS_IN_2027"
        payload.rawSubtype = "NEW_SUBTYPE"
        let verified = try await self.fixtures.verifier().verifyNotification(self.fixtures.signer.sign(payload))
        #expect(verified.payload.notificationType == nil)
        #expect(verified.payload.rawNotificationType == "SOMETHING_APPLE_ADDS_IN_2027")
        #expect(verified.payload.rawSubtype == "NEW_SUBTYPE")
    }

    @Test func productionRequiresAnAppAppleIdInConfiguration() {
        #expect(throws: ConfigurationError.self) {
            try VerifierConfiguration(environment: .production, apps: [AppIdentity(bundleId: "com.example")])
        }
        #expect(throws: ConfigurationError.self) { try VerifierConfiguration(environment: .sandbox, apps: []) }
    }

    @Test func onlyRetryableFailuresAreRetryable() {
        for kind in VerificationError.Kind.allCases {
            #expect(VerificationError(kind, "x").isRetryable == (kind == .retryable))
        }
    }
}
