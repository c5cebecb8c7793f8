import AppStoreModels
import AppStoreSigning
import Crypto
import Foundation
import TestSupport
import Testing
import X509

@testable import JWSVerification

/// Xcode and LocalTesting data: verified against an operator-given StoreKit test certificate, refused
/// without one, and always refused by Production and Sandbox verifiers.
@Suite struct StoreKitTestingTests {
    static let bundleId = "com.example.naturelab.backyardbirds.example"

    /// The "StoreKit Testing in Xcode" certificate that signed the Xcode fixtures (their only x5c entry).
    static func xcodeCertificate() throws -> Certificate {
        let jws = try Fixtures.text("apple/xcode/xcode-signed-transaction")
        let header = try JWSHeader.decode(segment: ArraySlice(jws.split(separator: ".")[0].utf8))
        return try Certificate(derEncoded: Array(Data(base64Encoded: header.x5c![0])!))
    }

    static func verifier(_ environment: Environment, storeKit: [Certificate]) throws -> SignedDataVerifier {
        SignedDataVerifier(
            configuration: try VerifierConfiguration(
                environment: environment, apps: [AppIdentity(bundleId: bundleId)], storeKitTestCertificates: storeKit))
    }

    @Test func xcodeDataVerifiesAgainstTheConfiguredStoreKitCertificate() async throws {
        let verifier = try Self.verifier(.xcode, storeKit: [Self.xcodeCertificate()])
        let transaction = try await verifier.verifyTransaction(Fixtures.text("apple/xcode/xcode-signed-transaction"))
        #expect(transaction.productId == "pass.premium")
        #expect(transaction.transactionId == "0")
        #expect(transaction.environment == .xcode)
        let renewal = try await verifier.verifyRenewalInfo(Fixtures.text("apple/xcode/xcode-signed-renewal-info"))
        #expect(renewal.originalTransactionId == "0")
        let app = try await verifier.verifyAppTransaction(Fixtures.text("apple/xcode/xcode-signed-app-transaction"))
        #expect(app.receiptType == .xcode)
    }

    @Test func xcodeDataIsRefusedWithoutAStoreKitCertificate() async throws {
        let jws = try Fixtures.text("apple/xcode/xcode-signed-transaction")
        let verifier = try Self.verifier(.xcode, storeKit: [])
        let error = await verificationError { try await verifier.verifyTransaction(jws) }
        #expect(error?.kind == .environment)
    }

    @Test func xcodeDataIsRefusedUnderAnotherStoreKitCertificate() async throws {
        let jws = try Fixtures.text("apple/xcode/xcode-signed-transaction")
        let other = try TestPKI().root
        let error = await verificationError {
            try await Self.verifier(.xcode, storeKit: [other]).verifyTransaction(jws)
        }
        #expect(error?.kind == .chain)
    }

    @Test(arguments: [Environment.production, .sandbox])
    func xcodeDataIsRefusedByProductionAndSandbox(environment: Environment) async throws {
        let jws = try Fixtures.text("apple/xcode/xcode-signed-transaction")
        // Even a deployment that (wrongly) trusts the StoreKit certificate as a root refuses it.
        let verifier = SignedDataVerifier(
            configuration: try VerifierConfiguration(
                environment: environment, apps: [AppIdentity(bundleId: Self.bundleId, appAppleId: 1)],
                trustedRoots: [Self.xcodeCertificate()], storeKitTestCertificates: [Self.xcodeCertificate()]))
        let error = await verificationError { try await verifier.verifyTransaction(jws) }
        #expect(error != nil)
        #expect(error?.kind == .certificate)
    }

    @Test func xcodeDataIsRefusedAfterTheStoreKitCertificateExpired() async throws {
        let jws = try Fixtures.text("apple/xcode/xcode-signed-transaction")
        let verifier = SignedDataVerifier(
            configuration: try VerifierConfiguration(
                environment: .xcode, apps: [AppIdentity(bundleId: Self.bundleId)],
                storeKitTestCertificates: [Self.xcodeCertificate()], validationTime: .now))
        let error = await verificationError { try await verifier.verifyTransaction(jws) }
        #expect(error?.kind == .chain)
    }

    @Test func localTestingDataSignedWithAGeneratedStoreKitCertificateVerifies() async throws {
        let pki = try TestPKI()
        let signer = AppStoreSigner(signingKey: pki.rootKey, header: .init(x5c: [TestPKI.base64DER(pki.root)]))
        var transaction = SignedFixtures.transaction(environment: .localTesting)
        transaction.bundleId = Self.bundleId
        let verifier = try Self.verifier(.localTesting, storeKit: [pki.root])
        let verified = try await verifier.verifyTransaction(signer.sign(transaction))
        #expect(verified.environment == .localTesting)
    }
}
