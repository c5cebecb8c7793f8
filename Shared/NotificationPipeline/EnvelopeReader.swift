import AppStoreModels
import Foundation

/// Reads `signedPayload` out of Apple's body.
///
/// Apple's body is always `{"signedPayload":"<JWS>"}`, and a JWS is base64url and dots, which JSON never
/// escapes; the fast path finds it by a byte scan instead of a JSON decode of ~20 KB, allowing JSON whitespace
/// around every token (`{"signedPayload": "…"}` as many clients write it). Anything else (more keys, escapes,
/// other characters) goes through `JSONDecoder`.
public enum EnvelopeReader {
    private static let key = Array(#""signedPayload""#.utf8)

    /// The signed payload, or nil when the body is not `{"signedPayload": "<string>"}` JSON.
    public static func signedPayload(in body: [UInt8]) -> String? {
        if let range = Self.fastPath(body) { return String(decoding: body[range], as: UTF8.self) }
        return Self.decoded(body)
    }

    /// The signed payload's UTF-8 bytes (a slice of `body` on the fast path, no copy), or nil as above.
    public static func signedPayloadBytes(in body: [UInt8]) -> ArraySlice<UInt8>? {
        if let range = Self.fastPath(body) { return body[range] }
        return Self.decoded(body).map { Array($0.utf8)[...] }
    }

    /// The general path: a JSON decode of the whole body.
    private static func decoded(_ body: [UInt8]) -> String? {
        (try? JSONDecoder().decode(ResponseBodyV2.self, from: Data(body)))?.signedPayload
    }

    /// Where the string is in a body of exactly `{ "signedPayload" : "<JWS characters>" }` (JSON whitespace
    /// anywhere between tokens), or nil for any other body.
    private static func fastPath(_ body: [UInt8]) -> Range<Int>? {
        body.withUnsafeBufferPointer { bytes -> Range<Int>? in
            var index = 0
            func skipWhitespace() {
                while index < bytes.count, Self.isWhitespace(bytes[index]) { index += 1 }
            }
            func take(_ byte: UInt8) -> Bool {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == byte else { return false }
                index += 1
                return true
            }
            guard take(UInt8(ascii: "{")) else { return nil }
            skipWhitespace()
            guard bytes.count - index >= Self.key.count, Self.key.indices.allSatisfy({ bytes[index + $0] == Self.key[$0] }) else { return nil }
            index += Self.key.count
            guard take(UInt8(ascii: ":")), take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            Self.jwsCharacters.withUnsafeBufferPointer { isJWS in
                while index < bytes.count, isJWS[Int(bytes[index])] { index += 1 }
            }
            let end = index
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            guard take(UInt8(ascii: "}")) else { return nil }
            skipWhitespace()
            return index == bytes.count ? start..<end : nil
        }
    }

    /// JSON's insignificant whitespace: space, tab, LF, CR.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Whether a byte is a JWS character: base64url letters, digits, `-`, `_` and the `.` separators (a table:
    /// the scan runs over every byte of a ~19 KB body).
    private static let jwsCharacters: [Bool] = (0...255).map { byte in
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2D || byte == 0x5F || byte == 0x2E
    }
}
