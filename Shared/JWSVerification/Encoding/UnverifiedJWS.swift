import AppStoreModels
import Foundation

/// The structure of a compact JWS, decoded **without any signature or chain check**.
///
/// For cheap admission checks (ingest) and for routing before verification; never act on its contents.
/// ``SignedDataVerifier`` is the only source of verified data.
public struct UnverifiedJWS: Sendable {
    /// The header's `alg`.
    public let algorithm: String?
    /// How many certificates the header's `x5c` holds (nil when it has none).
    public let certificateCount: Int?
    /// The decoded payload bytes (JSON, untrusted).
    public let payload: [UInt8]

    /// Splits and decodes a compact JWS; fails with a ``VerificationError`` of kind `format` when it is not one.
    public init(_ text: String) throws(VerificationError) {
        let jws = try CompactJWS(text.utf8)
        let header = try JWSHeader.decode(segment: jws.header)
        self.algorithm = header.alg
        self.certificateCount = header.x5c?.count
        self.payload = try jws.decodedPayload()
    }

    /// Decodes the payload as an App Store type (untrusted).
    public func decodePayload<T: Decodable>(as type: T.Type) throws(VerificationError) -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(self.payload))
        } catch {
            throw VerificationError(.format, "the payload is not a JSON \(type)")
        }
    }
}
