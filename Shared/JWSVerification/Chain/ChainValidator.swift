import AppStoreModels
import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Turns the `x5c` of a JWS header into a validated chain: three certificates leading through `x5c[1]` to a
/// configured root under RFC 5280 and the App Store marker rules, or, for StoreKit testing, one certificate
/// equal to a configured StoreKit test certificate.
///
/// The root a header carries (`x5c[2]`) is never trusted: only configured roots anchor a chain.
struct ChainValidator: Sendable {
    private let roots: CertificateStore
    private let storeKitTestCertificates: [Certificate]
    private let storeKitTesting: Bool
    /// With online checks, every validation takes the full path (each certificate's OCSP answer is asked).
    let onlineChecks: OnlineChecks?

    /// Creates a validator for a configuration.
    init(configuration: VerifierConfiguration) {
        self.roots = CertificateStore(configuration.trustedRoots)
        self.storeKitTestCertificates = configuration.storeKitTestCertificates
        self.storeKitTesting = configuration.isStoreKitTesting
        self.onlineChecks = configuration.onlineChecks
    }

    // MARK: Header → certificates

    /// Checks the header's algorithm and parses its certificates, leaf first.
    func certificates(from header: JWSHeader) throws(VerificationError) -> [Certificate] {
        guard let alg = header.alg else { throw VerificationError(.format, "the header has no alg") }
        guard alg == "ES256" else { throw VerificationError(.format, "alg must be ES256, found \(alg)") }
        guard let x5c = header.x5c else { throw VerificationError(.format, "the header has no x5c certificate chain") }
        let expected = self.storeKitTesting ? 1 : 3
        guard x5c.count == expected else {
            throw VerificationError(.certificate, "x5c must hold exactly \(expected) certificates, found \(x5c.count)")
        }
        var certificates: [Certificate] = []
        for (index, encoded) in x5c.enumerated() {
            guard let der = Base64.decode(Array(encoded.utf8)) else {
                throw VerificationError(.certificate, "x5c[\(index)] is not base64")
            }
            do {
                certificates.append(try Certificate(derEncoded: der))
            } catch {
                throw VerificationError(.certificate, "x5c[\(index)] is not a DER X.509 certificate")
            }
        }
        return certificates
    }

    // MARK: Validation

    /// Validates the chain at `time` and returns the leaf's signing key with the chain's validity window, and the
    /// intermediate with its own window (leaf → intermediate → root chains only), to be known from now on.
    func validate(_ certificates: [Certificate], at time: Date) async throws(VerificationError) -> (
        chain: VerifiedChain, issuer: KnownIssuers.Issuer?
    ) {
        let checkedAt = Date()
        let path =
            self.storeKitTesting
            ? try self.storeKitPath(certificates[0], at: time)
            : try await self.appStorePath(certificates, at: time)
        var chain = try Self.chain(leaf: certificates[0], path: path)
        if let online = self.onlineChecks, !self.storeKitTesting {
            chain.revocationCheckedUntil = checkedAt.addingTimeInterval(online.cacheLifetime.timeInterval)
        }
        let issuer =
            path.count == 3
            ? KnownIssuers.Issuer(
                certificate: path[1], validFrom: path.dropFirst().map(\.notValidBefore).max()!,
                validUntil: path.dropFirst().map(\.notValidAfter).min()!) : nil
        return (chain, issuer)
    }

    /// Validates only a leaf whose intermediate was validated before (offline only: an online check asks about every
    /// certificate, so it takes the full path): RFC 5280 and the leaf's marker, anchored at the known intermediate.
    func validateLeaf(_ leaf: Certificate, under issuer: KnownIssuers.Issuer, at time: Date)
        async throws(VerificationError) -> VerifiedChain
    {
        guard issuer.isValid(at: time) else {
            throw VerificationError(.chain, "the intermediate or its root is not valid at \(Self.format(time))")
        }
        var verifier = Verifier(rootCertificates: CertificateStore([issuer.certificate])) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            AppleMarkerOIDPolicy(shape: .leafUnderKnownIssuer)
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore())
        guard case .validCertificate(let path) = result else {
            throw VerificationError(
                .chain, "the leaf does not validate under its known intermediate at \(Self.format(time))")
        }
        var chain = try Self.chain(leaf: leaf, path: Array(path))
        chain = VerifiedChain(
            signingKey: chain.signingKey, validFrom: max(chain.validFrom, issuer.validFrom),
            validUntil: min(chain.validUntil, issuer.validUntil))
        return chain
    }

    /// Validates an intermediate up to a configured root now (RFC 5280 and Apple's intermediate marker), to know it
    /// before any chain under it arrives.
    func validateIntermediate(_ intermediate: Certificate, at time: Date) async throws(VerificationError)
        -> KnownIssuers.Issuer
    {
        var verifier = Verifier(rootCertificates: self.roots) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            AppleMarkerOIDPolicy(shape: .intermediate)
        }
        let result = await verifier.validate(leaf: intermediate, intermediates: CertificateStore())
        guard case .validCertificate(let path) = result else {
            throw VerificationError(
                .chain,
                "the intermediate \(intermediate.subject) does not chain to a configured root with Apple's marker")
        }
        return KnownIssuers.Issuer(
            certificate: intermediate, validFrom: path.map(\.notValidBefore).max()!,
            validUntil: path.map(\.notValidAfter).min()!)
    }

    /// The leaf's P-256 key with the path's validity window.
    private static func chain(leaf: Certificate, path: [Certificate]) throws(VerificationError) -> VerifiedChain {
        guard let signingKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw VerificationError(.certificate, "the leaf certificate's key is not a P-256 key")
        }
        return VerifiedChain(
            signingKey: signingKey, validFrom: path.map(\.notValidBefore).max()!,
            validUntil: path.map(\.notValidAfter).min()!)
    }

    /// Validates leaf → `x5c[1]` → configured root with RFC 5280 and the Apple marker policy.
    private func appStorePath(_ certificates: [Certificate], at time: Date) async throws(VerificationError)
        -> [Certificate]
    {
        // Online: every certificate naming an OCSP responder must be reported good now (hard failure).
        let requester = self.onlineChecks.map { TrackingOCSPRequester(fetcher: $0.fetcher) }
        var verifier = Verifier(rootCertificates: self.roots) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            AppleMarkerOIDPolicy(shape: .full)
            if let requester {
                OCSPVerifierPolicy(failureMode: .hard, requester: requester)
            }
        }
        let result = await verifier.validate(leaf: certificates[0], intermediates: CertificateStore([certificates[1]]))
        switch result {
        case .validCertificate(let chain):
            return Array(chain)
        case .couldNotValidate(let failures):
            if let troubles = requester?.responderTroubles, !troubles.isEmpty {
                throw VerificationError(
                    .retryable, "the OCSP responder could not be asked: " + troubles.joined(separator: "; "))
            }
            let reasons = Set(failures.map { String(describing: $0.policyFailureReason) }).sorted()
            let detail =
                reasons.isEmpty
                ? "no path from the leaf through x5c[1] to a trusted root"
                : reasons.joined(separator: "; ")
            throw VerificationError(.chain, "\(detail) (validation time \(Self.format(time)))")
        }
    }

    /// Accepts a single StoreKit test certificate equal to a configured one and valid at `time`.
    private func storeKitPath(_ certificate: Certificate, at time: Date) throws(VerificationError) -> [Certificate] {
        guard self.storeKitTestCertificates.contains(certificate) else {
            throw VerificationError(.chain, "the certificate is not a configured StoreKit test certificate")
        }
        guard certificate.notValidBefore <= time, time <= certificate.notValidAfter else {
            throw VerificationError(
                .chain,
                "the StoreKit test certificate is valid from \(Self.format(certificate.notValidBefore)) to "
                    + "\(Self.format(certificate.notValidAfter)), not at \(Self.format(time))")
        }
        return [certificate]
    }

    /// ISO 8601 rendering of a validation time for error details.
    private static func format(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
