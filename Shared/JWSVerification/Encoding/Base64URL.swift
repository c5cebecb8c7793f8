public import Foundation

/// base64url without padding, as JWS and JWT segments are written.
public enum Base64URL {
    /// Encodes bytes.
    public static func encode(_ bytes: some DataProtocol) -> String {
        var encoded = Array(Data(bytes).base64EncodedData())
        while encoded.last == UInt8(ascii: "=") { encoded.removeLast() }
        for index in encoded.indices {
            switch encoded[index] {
            case UInt8(ascii: "+"): encoded[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): encoded[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    /// Decodes base64url (or base64), padding optional; nil when it is not.
    public static func decode(_ text: String) -> [UInt8]? {
        Base64.decode(Array(text.utf8))
    }
}
