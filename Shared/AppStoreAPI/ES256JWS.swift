import Crypto
import Foundation
import JWSVerification

/// A compact JWS signed with ES256 by one of a set of keys the header's `kid` names: the shape of the App Store
/// Server API's bearer tokens and of the offer signatures StoreKit carries, checked the same way for both.
enum ES256JWS {
    /// Why a JWS is refused, in words.
    struct Failure: Error {
        var reason: String
    }

    /// The claims' bytes of `jws` once its header says ES256, names a key of `keys`, and the signature verifies with
    /// that key; `kind` names the thing in the reasons ("JWS", "JWT").
    static func verifiedClaims(_ jws: String, keys: [String: P256.Signing.PublicKey], kind: String = "JWS")
        throws(Failure) -> [UInt8]
    {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            let claimBytes = Base64URL.decode(parts[1]), let signatureBytes = Base64URL.decode(parts[2])
        else { throw Failure(reason: "not a compact \(kind)") }
        guard let header = try? JSONDecoder().decode([String: String].self, from: Data(headerBytes)) else {
            throw Failure(reason: "the header is not JSON")
        }
        guard header["alg"] == "ES256" else { throw Failure(reason: "alg must be ES256") }
        guard let keyID = header["kid"], let key = keys[keyID] else {
            throw Failure(reason: "unknown key \(header["kid"] ?? "(none)")")
        }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            key.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { throw Failure(reason: "the signature does not verify with key \(keyID)") }
        return claimBytes
    }
}
