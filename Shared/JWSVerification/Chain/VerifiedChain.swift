import Crypto
import Foundation
import X509

/// A certificate chain that passed validation, reduced to what later signatures need.
struct VerifiedChain: Sendable {
    /// The leaf's P-256 key, which signs the JWS.
    let signingKey: P256.Signing.PublicKey
    /// The latest `notBefore` of the certificates on the validated path.
    let validFrom: Date
    /// The earliest `notAfter` of the certificates on the validated path.
    let validUntil: Date
    /// With online checks: until when the OCSP answers that cleared the chain are trusted (nil: offline, for ever).
    var revocationCheckedUntil: Date? = nil

    /// Whether every certificate of the path is valid at `time`, so the chain needs no new validation.
    func isValid(at time: Date) -> Bool {
        self.validFrom <= time && time <= self.validUntil
    }

    /// Whether the chain's revocation status is still trusted now (always, when it was verified offline).
    func isFresh(now: Date) -> Bool {
        self.revocationCheckedUntil.map { now < $0 } ?? true
    }
}
