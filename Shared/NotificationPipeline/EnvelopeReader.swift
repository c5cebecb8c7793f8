import AppStoreModels
import Foundation

/// Reads `signedPayload` out of Apple's body.
///
/// Apple's body is always `{"signedPayload":"<JWS>"}`, and a JWS is base64url and dots, which JSON never
/// escapes; the fast path finds it by a byte scan instead of a JSON decode of ~20 KB. Anything else (other
/// spacing, more keys, escapes) goes through `JSONDecoder`.
public enum EnvelopeReader {
    private static let prefix = Array(#"{"signedPayload":""#.utf8)

    /// The signed payload, or nil when the body is not `{"signedPayload": "<string>"}` JSON.
    public static func signedPayload(in body: [UInt8]) -> String? {
        if let fast = Self.fastPath(body) { return fast }
        return (try? JSONDecoder().decode(ResponseBodyV2.self, from: Data(body)))?.signedPayload
    }

    /// The exact compact form, with only JWS characters inside the string.
    private static func fastPath(_ body: [UInt8]) -> String? {
        guard body.count > Self.prefix.count + 2, body.starts(with: Self.prefix),
              body[body.count - 1] == UInt8(ascii: "}"), body[body.count - 2] == UInt8(ascii: "\"")
        else { return nil }
        let value = body[Self.prefix.count..<(body.count - 2)]
        guard value.allSatisfy(Self.isJWSCharacter) else { return nil }
        return String(decoding: value, as: UTF8.self)
    }

    /// base64url letters, digits, `-`, `_` and the `.` separators.
    private static func isJWSCharacter(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2D || byte == 0x5F || byte == 0x2E
    }
}
