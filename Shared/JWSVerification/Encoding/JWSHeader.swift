import Foundation

/// The protected header of an App Store JWS: the algorithm and the certificate chain.
struct JWSHeader: Decodable {
    /// The signature algorithm; App Store data is always ES256.
    var alg: String?
    /// The certificate chain, leaf first, each standard base64 of DER.
    var x5c: [String]?

    /// Decodes a header segment, failing with a format error for anything but a JSON object.
    static func decode(segment: ArraySlice<UInt8>) throws(VerificationError) -> JWSHeader {
        guard let json = Base64.decode(segment) else {
            throw VerificationError(.format, "the header is not base64url")
        }
        do {
            return try JSONDecoder().decode(JWSHeader.self, from: Data(json))
        } catch {
            throw VerificationError(.format, "the header is not a JSON object with string alg and x5c")
        }
    }
}
