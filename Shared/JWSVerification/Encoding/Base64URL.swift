public import Foundation

/// base64url without padding, as JWS and JWT segments are written.
public enum Base64URL {
    /// Encodes bytes.
    public static func encode(_ bytes: some DataProtocol) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url (or base64), padding optional; nil when it is not.
    public static func decode(_ text: String) -> [UInt8]? {
        Base64.decode(Array(text.utf8))
    }
}
