import AppStoreModels
import Crypto
import Foundation
import JWSVerification

/// The raw signature work of one notification, outside the verifier: the baseline it is compared with.
struct SignatureInputs: @unchecked Sendable {
    private let key = P256.Signing.PrivateKey()
    private let digest: SHA256.Digest
    private let digestSignature: P256.Signing.ECDSASignature
    /// Each JWS's signing input (`header.payload`) with a signature over it by `key`.
    private let signed: [(Data, P256.Signing.ECDSASignature)]

    /// Prepares the three signing inputs of the notification (outer, transaction, renewal info).
    init(notification: VerifiedNotification) {
        let jwsList = [
            notification.signedPayload, notification.payload.data?.signedTransactionInfo,
            notification.payload.data?.signedRenewalInfo,
        ].compactMap { $0 }
        let key = self.key
        self.signed = jwsList.map { jws in
            let input = Data(jws[..<jws.lastIndex(of: ".")!].utf8)
            return (input, try! key.signature(for: input))
        }
        self.digest = SHA256.hash(data: Data("benchmark".utf8))
        self.digestSignature = try! key.signature(for: self.digest)
    }

    /// One P-256 verification of a precomputed digest.
    func verifyDigestOnce() {
        precondition(self.key.publicKey.isValidSignature(self.digestSignature, for: self.digest))
    }

    /// The three signature checks a notification needs, hashing included: the physical limit.
    func verifyThreeSigningInputs() {
        for (input, signature) in self.signed {
            precondition(self.key.publicKey.isValidSignature(signature, for: input))
        }
    }
}
