import Foundation
import TestSupport
import Testing
import X509

@testable import JWSVerification

/// The chain-only vectors of `apple/chain-certs`, validated at 2025-11-01 unless a test says otherwise.
@Suite struct ChainCertificateTests {
    static let validationTime = Date(timeIntervalSince1970: 1_761_962_975)

    static func certificate(_ name: String) throws -> Certificate {
        try Certificate(derEncoded: Fixtures.bytes("apple/chain-certs/\(name)_BASE64_ENCODED.der"))
    }

    static func validator(root: String) throws -> ChainValidator {
        ChainValidator(
            configuration: try VerifierConfiguration(
                environment: .sandbox, apps: [AppIdentity(bundleId: "com.example")], trustedRoots: [certificate(root)]))
    }

    static func validate(leaf: String, intermediate: String, root: String, at time: Date = validationTime) async throws
        -> VerificationError?
    {
        let chain = [try certificate(leaf), try certificate(intermediate), try certificate(root)]
        let validator = try validator(root: root)
        return await verificationError { try await validator.validate(chain, at: time) }
    }

    @Test func leafAndIntermediateUnderTheTestRootAreValid() async throws {
        #expect(try await Self.validate(leaf: "LEAF_CERT", intermediate: "INTERMEDIATE_CA", root: "ROOT_CA") == nil)
    }

    @Test func intermediateWithoutTheMarkerOIDIsRefused() async throws {
        let error = try await Self.validate(
            leaf: "LEAF_CERT_FOR_INTERMEDIATE_CA_INVALID_OID", intermediate: "INTERMEDIATE_CA_INVALID_OID",
            root: "ROOT_CA")
        #expect(error?.kind == .chain)
        #expect(error?.detail.contains("1.2.840.113635.100.6.2.1") == true)
    }

    @Test func leafWithoutTheMarkerOIDIsRefused() async throws {
        let error = try await Self.validate(
            leaf: "LEAF_CERT_INVALID_OID", intermediate: "INTERMEDIATE_CA", root: "ROOT_CA")
        #expect(error?.kind == .chain)
        #expect(error?.detail.contains("1.2.840.113635.100.6.11.1") == true)
    }

    @Test func theValidChainIsExpiredIn2042() async throws {
        let error = try await Self.validate(
            leaf: "LEAF_CERT", intermediate: "INTERMEDIATE_CA", root: "ROOT_CA",
            at: Date(timeIntervalSince1970: 2_280_946_846))
        #expect(error?.kind == .chain)
    }

    @Test func theTestChainDoesNotLeadToTheRealAppleRoot() async throws {
        let chain = [
            try Self.certificate("LEAF_CERT"), try Self.certificate("INTERMEDIATE_CA"), try Self.certificate("ROOT_CA"),
        ]
        let validator = try Self.validator(root: "REAL_APPLE_ROOT")
        let error = await verificationError { try await validator.validate(chain, at: Self.validationTime) }
        #expect(error?.kind == .chain)
    }

    @Test func theRealAppleChainIsValid() async throws {
        #expect(
            try await Self.validate(
                leaf: "REAL_APPLE_SIGNING_CERTIFICATE", intermediate: "REAL_APPLE_INTERMEDIATE", root: "REAL_APPLE_ROOT"
            )
                == nil)
    }

    @Test func aChainOfTwoCertificatesIsRefused() throws {
        let validator = try Self.validator(root: "ROOT_CA")
        let x5c = try ["LEAF_CERT", "INTERMEDIATE_CA"].map {
            Data(try Fixtures.bytes("apple/chain-certs/\($0)_BASE64_ENCODED.der")).base64EncodedString()
        }
        #expect(throws: VerificationError.self) { try validator.certificates(from: JWSHeader(alg: "ES256", x5c: x5c)) }
        do {
            _ = try validator.certificates(from: JWSHeader(alg: "ES256", x5c: x5c))
        } catch {
            #expect(error.kind == .certificate)
        }
    }

    @Test(arguments: ["not base64 at all!", "AAAA", ""])
    func anX5CEntryThatIsNotBase64DERIsRefused(entry: String) throws {
        let validator = try Self.validator(root: "ROOT_CA")
        let good = Data(try Fixtures.bytes("apple/chain-certs/LEAF_CERT_BASE64_ENCODED.der")).base64EncodedString()
        do {
            _ = try validator.certificates(from: JWSHeader(alg: "ES256", x5c: [good, entry, good]))
            Issue.record("accepted a bad x5c entry")
        } catch {
            #expect(error.kind == .certificate)
            #expect(error.detail.contains("x5c[1]"))
        }
    }
}
