import AppStoreModels
import Foundation
import JWSVerification

/// Finds the JWS in what an operator feeds `iapctl verify`: a bare compact JWS, or Apple's POST body.
enum SignedInput {
    /// Returns the JWS text: the `signedPayload` of a JSON body, or the trimmed input itself.
    static func extractJWS(from bytes: [UInt8]) throws(VerificationError) -> String {
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("{") else { return text }
        guard let body = try? JSONDecoder().decode(ResponseBodyV2.self, from: Data(text.utf8)),
            let signedPayload = body.signedPayload
        else {
            throw VerificationError(.format, "a JSON input must be Apple's body {\"signedPayload\": \"<JWS>\"}")
        }
        return signedPayload
    }
}
