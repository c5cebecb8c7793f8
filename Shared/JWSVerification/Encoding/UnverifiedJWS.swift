public import AppStoreModels
import Foundation

/// The structure of a compact JWS, decoded **without any signature or chain check**.
///
/// For cheap admission checks (ingest) and for routing before verification; never act on its contents.
/// ``SignedDataVerifier`` is the only source of verified data.
public struct UnverifiedJWS: Sendable {
    /// The split serialization, kept so a verifier can check exactly these bytes without splitting again.
    let compact: CompactJWS
    /// The header's `alg`.
    public let algorithm: String?
    /// How many certificates the header's `x5c` holds (nil when it has none).
    public let certificateCount: Int?
    /// The decoded payload bytes (JSON, untrusted).
    public let payload: [UInt8]

    /// Splits and decodes a compact JWS; fails with a ``VerificationError`` of kind `format` when it is not one.
    public init(_ text: String) throws(VerificationError) {
        try self.init(bytes: text.utf8)
    }

    /// Splits and decodes a compact JWS given as UTF-8 bytes. With `headers`, a header seen before is not
    /// decoded again: its facts come from the cache (the same bytes say the same), and a new header's facts
    /// are added once it decoded.
    public init(bytes: some Collection<UInt8>, headers: HeaderCache<JWSHeaderFacts>? = nil) throws(VerificationError) {
        let jws = try CompactJWS(bytes)
        let facts: JWSHeaderFacts
        if let known = headers?.value(forHeader: jws.header) {
            facts = known
        } else {
            let header = try JWSHeader.decode(segment: jws.header)
            facts = JWSHeaderFacts(algorithm: header.alg, certificateCount: header.x5c?.count)
            headers?.insert(facts, forHeader: jws.header)
        }
        self.compact = jws
        self.algorithm = facts.algorithm
        self.certificateCount = facts.certificateCount
        self.payload = try jws.decodedPayload()
    }

    /// Decodes the payload as an App Store type (untrusted).
    public func decodePayload<T: Decodable>(as type: T.Type) throws(VerificationError) -> T {
        try Self.decode(type, from: self.payload)
    }

    /// Decodes the payload as a notification, keeping the JWS with it so a verifier can verify the two
    /// together (`SignedDataVerifier.verifyNotificationEnvelope(_:)`) without
    /// splitting and decoding a second time.
    public func decodeNotification() throws(VerificationError) -> UnverifiedNotification {
        UnverifiedNotification(
            jws: self.compact, payload: try self.decodePayload(as: ResponseBodyV2DecodedPayload.self))
    }

    /// Decodes only the payload segment of a compact JWS (the header is not decoded at all): the cheapest
    /// look inside, for routing (a nested transaction's `originalTransactionId`). Untrusted.
    public static func decodePayload<T: Decodable>(of text: String, as type: T.Type) throws(VerificationError) -> T {
        try Self.decode(type, from: CompactJWS(text.utf8).decodedPayload())
    }

    /// Decodes JSON bytes, failing with a format error.
    private static func decode<T: Decodable>(_ type: T.Type, from json: [UInt8]) throws(VerificationError) -> T {
        do {
            return try FastJSONDecoder().decode(type, from: json)
        } catch {
            throw VerificationError(.format, "the payload is not a JSON \(type)")
        }
    }
}

/// What structural checks read from a JWS protected header, without verifying anything: its `alg` and how
/// many certificates its `x5c` holds. Kept per header in a ``HeaderCache`` by ingest, which sees the same
/// few headers (one per Apple signing certificate) on every notification.
public struct JWSHeaderFacts: Hashable, Sendable {
    /// The header's `alg`.
    public let algorithm: String?
    /// How many certificates the header's `x5c` holds (nil when it has none).
    public let certificateCount: Int?
}

/// A notification's outer JWS with its payload decoded from it, **not verified**: ingest's structural checks
/// read the payload; `SignedDataVerifier.verifyNotificationEnvelope(_:)` then
/// verifies the same bytes. Only ``UnverifiedJWS/decodeNotification()`` makes one, so the payload is always
/// the decoding of the JWS it travels with.
public struct UnverifiedNotification: Sendable {
    /// The split JWS the payload was decoded from.
    let jws: CompactJWS
    /// The decoded payload (untrusted until verified).
    public let payload: ResponseBodyV2DecodedPayload
}
