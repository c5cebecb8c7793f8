import AppStoreModels
import Foundation
import TestSupport
import Testing
import X509

@testable import JWSVerification

/// Every outcome of the conformance table for Apple's mock signed data and the real Apple chain.
@Suite struct AppleConformanceTests {
    /// Apple's test CA, the root of `mock_signed_data`.
    static func testCA() throws -> Certificate {
        try Certificate(derEncoded: Fixtures.bytes("apple/certs/testCA.der"))
    }

    /// A verifier for Apple's mock data: root testCA, no caching surprises.
    static func mockVerifier(
        environment: Environment, bundleId: String = "com.example", appAppleId: Int64? = 1234,
        roots: [Certificate]? = nil
    ) throws -> SignedDataVerifier {
        SignedDataVerifier(
            configuration: try VerifierConfiguration(
                environment: environment, apps: [AppIdentity(bundleId: bundleId, appAppleId: appAppleId)],
                trustedRoots: roots ?? [testCA()]))
    }

    /// The real notification's verifier: Apple Root CA G3, the real app.
    static func realVerifier(roots: [Certificate]? = nil) throws -> SignedDataVerifier {
        SignedDataVerifier(
            configuration: try VerifierConfiguration(
                environment: .sandbox,
                apps: [AppIdentity(bundleId: "com.loki-project.loki-messenger", appAppleId: 1_470_168_868)],
                trustedRoots: roots ?? [Certificate(derEncoded: Fixtures.bytes("real-sandbox/AppleRootCA-G3.der"))]))
    }

    // MARK: mock_signed_data

    @Test func testNotificationIsValidInSandbox() async throws {
        let verified = try await Self.mockVerifier(environment: .sandbox)
            .verifyNotification(Fixtures.text("apple/mock_signed_data/testNotification"))
        #expect(verified.payload.notificationType == .test)
        #expect(verified.payload.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(verified.payload.signedDate == Timestamp(millisecondsSince1970: 1_681_314_324_000))
        #expect(verified.transaction == nil && verified.renewalInfo == nil)
    }

    @Test func testNotificationInProductionIsAnEnvironmentError() async throws {
        let jws = try Fixtures.text("apple/mock_signed_data/testNotification")
        let error = await verificationError {
            try await Self.mockVerifier(environment: .production).verifyNotification(jws)
        }
        #expect(error?.kind == .environment)
    }

    @Test func testNotificationWithAnotherAppAppleIdIsAnAppIdentifierError() async throws {
        let jws = try Fixtures.text("apple/mock_signed_data/testNotification")
        let verifier = try Self.mockVerifier(environment: .production, appAppleId: 1235)
        let error = await verificationError { try await verifier.verifyNotification(jws) }
        #expect(error?.kind == .appIdentifier)
    }

    @Test func wrongBundleIdIsAnAppIdentifierError() async throws {
        let jws = try Fixtures.text("apple/mock_signed_data/wrongBundleId")
        let error = await verificationError {
            try await Self.mockVerifier(environment: .sandbox).verifyNotification(jws)
        }
        #expect(error?.kind == .appIdentifier)
        #expect(error?.detail.contains("com.example.wrong") == true)
    }

    @Test func missingX5CIsAFormatError() async throws {
        let jws = try Fixtures.text("apple/mock_signed_data/missingX5CHeaderClaim")
        let error = await verificationError {
            try await Self.mockVerifier(environment: .sandbox).verifyNotification(jws)
        }
        #expect(error?.kind == .format)
        #expect(error?.detail.contains("x5c") == true)
    }

    @Test func transactionInfoIsValidAsATransaction() async throws {
        let transaction = try await Self.mockVerifier(environment: .sandbox)
            .verifyTransaction(Fixtures.text("apple/mock_signed_data/transactionInfo"))
        #expect(transaction.environment == .sandbox)
    }

    @Test func transactionInfoForAnotherBundleIsAnAppIdentifierError() async throws {
        let jws = try Fixtures.text("apple/mock_signed_data/transactionInfo")
        let verifier = try Self.mockVerifier(environment: .sandbox, bundleId: "com.example.x")
        let error = await verificationError { try await verifier.verifyTransaction(jws) }
        #expect(error?.kind == .appIdentifier)
    }

    @Test func renewalInfoIsValidAsRenewalInfo() async throws {
        let renewalInfo = try await Self.mockVerifier(environment: .sandbox)
            .verifyRenewalInfo(Fixtures.text("apple/mock_signed_data/renewalInfo"))
        #expect(renewalInfo.environment == .sandbox)
    }

    @Test(arguments: ["a.b.c", "a.b.c.d", "", "abc", "..", "a..c"])
    func nonJWSTextIsAFormatError(text: String) async throws {
        let error = await verificationError {
            try await Self.mockVerifier(environment: .sandbox).verifyNotification(text)
        }
        #expect(error?.kind == .format)
    }

    @Test func mockDataUnderAppleRootG3IsAChainError() async throws {
        let jws = try Fixtures.text("apple/mock_signed_data/testNotification")
        let verifier = try Self.mockVerifier(environment: .sandbox, roots: [AppleRootCertificates.rootCAG3])
        let error = await verificationError { try await verifier.verifyNotification(jws) }
        #expect(error?.kind == .chain)
    }

    @Test func oneChangedSignatureCharacterIsASignatureError() async throws {
        let jws = try Fixtures.text("apple/mock_signed_data/testNotification")
        var characters = Array(jws)
        // The middle of the signature segment: every bit there is significant (the last character's
        // low bits may be padding that decoding ignores).
        let signatureStart = jws.lastIndex(of: ".")!.utf16Offset(in: jws) + 1
        let position = signatureStart + (characters.count - signatureStart) / 2
        characters[position] = characters[position] == "A" ? "B" : "A"
        let error = await verificationError {
            try await Self.mockVerifier(environment: .sandbox).verifyNotification(String(characters))
        }
        #expect(error?.kind == .signature)
    }

    // MARK: real-sandbox

    @Test func realAppleNotificationVerifiesWithEveryNestedJWS() async throws {
        let verified = try await Self.realVerifier()
            .verifyNotification(Fixtures.text("real-sandbox/signedPayload_DID_RENEW"))
        #expect(verified.payload.notificationType == .didRenew)
        #expect(verified.payload.notificationUUID == "1a7cdc3d-9360-49c3-ae37-0423e4c6e7c7")
        #expect(verified.payload.signedDate?.millisecondsSince1970 == 1_759_302_518_835)
        #expect(verified.payload.data?.status == .active)
        let transaction = try #require(verified.transaction)
        #expect(transaction.transactionId == "2000001024998954")
        #expect(transaction.originalTransactionId == "2000001024993299")
        #expect(transaction.productId == "com.getsession.org.pro_sub")
        #expect(transaction.transactionReason == .renewal)
        #expect(transaction.price == 1990)
        #expect(transaction.currency == "AUD")
        #expect(verified.renewalInfo?.autoRenewStatus == .on)
    }

    @Test func realNestedJWSVerifyOnTheirOwn() async throws {
        let verifier = try Self.realVerifier()
        let transaction = try await verifier.verifyTransaction(
            Fixtures.text("real-sandbox/signedTransactionInfo_DID_RENEW"))
        #expect(transaction.transactionId == "2000001024998954")
        let renewal = try await verifier.verifyRenewalInfo(Fixtures.text("real-sandbox/signedRenewalInfo_DID_RENEW"))
        #expect(renewal.originalTransactionId == "2000001024993299")
    }

    @Test func realNotificationUnderTheTestCAIsAChainError() async throws {
        let jws = try Fixtures.text("real-sandbox/signedPayload_DID_RENEW")
        let verifier = try Self.realVerifier(roots: [Self.testCA()])
        let error = await verificationError { try await verifier.verifyNotification(jws) }
        #expect(error?.kind == .chain)
    }

    @Test func builtInRootIsTheShippedAppleRootG3() throws {
        #expect(AppleRootCertificates.rootCAG3DER == (try Fixtures.bytes("real-sandbox/AppleRootCA-G3.der")))
        let defaults = try VerifierConfiguration(environment: .sandbox, apps: [AppIdentity(bundleId: "b")])
        #expect(defaults.trustedRoots == [AppleRootCertificates.rootCAG3])
    }

    /// The built-in intermediate is the one Apple's real notification carries, it warms a default verifier (it
    /// chains to Apple Root CA G3 with Apple's marker), and Apple's notification is then known before it is verified.
    @Test func builtInIntermediateIsTheRealChainsAndWarmsADefaultVerifier() async throws {
        let jws = try Fixtures.text("real-sandbox/signedPayload_DID_RENEW")
        let header = try #require(jws.split(separator: ".").first)
        var base64 = header.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let object = try JSONSerialization.jsonObject(with: try #require(Data(base64Encoded: base64))) as? [String: Any]
        let x5c = try #require(object?["x5c"] as? [String])
        #expect(Data(AppleIntermediateCertificates.wwdrG6DER).base64EncodedString() == x5c[1])
        let verifier = SignedDataVerifier(
            configuration: try VerifierConfiguration(
                environment: .sandbox,
                apps: [AppIdentity(bundleId: "com.loki-project.loki-messenger", appAppleId: 1_470_168_868)]))
        #expect(!verifier.knowsChain(ofJWS: jws))
        try await verifier.warm(intermediates: AppleIntermediateCertificates.all)
        #expect(verifier.knownIssuerCount == 1 && verifier.knowsChain(ofJWS: jws), "known before its first check")
        _ = try await verifier.verifyNotification(jws)
    }

    @Test func realNotificationVerifiesWithTheBuiltInRoot() async throws {
        let verifier = SignedDataVerifier(
            configuration: try VerifierConfiguration(
                environment: .sandbox,
                apps: [AppIdentity(bundleId: "com.loki-project.loki-messenger", appAppleId: 1_470_168_868)]))
        let verified = try await verifier.verifyNotification(Fixtures.text("real-sandbox/signedPayload_DID_RENEW"))
        #expect(verified.transaction?.transactionId == "2000001024998954")
        // Outer, transaction and renewal info share one chain: one cache entry.
        #expect(verifier.cachedChainCount == 1)
    }
}
