public import Foundation

/// base64url without padding, as JWS and JWT segments are written.
public enum Base64URL {
    /// The 64 digits of base64url.
    private static let digits = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes bytes, straight into the text (no intermediate padded base64: JWS segments are on signing hot paths).
    public static func encode(_ bytes: some DataProtocol) -> String {
        let input = Array(bytes)
        var out = [UInt8]()
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            out.append(Self.digits[Int(chunk >> 18 & 63)])
            out.append(Self.digits[Int(chunk >> 12 & 63)])
            out.append(Self.digits[Int(chunk >> 6 & 63)])
            out.append(Self.digits[Int(chunk & 63)])
            index += 3
        }
        let rest = input.count - index
        if rest > 0 {
            let chunk = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
            out.append(Self.digits[Int(chunk >> 18 & 63)])
            out.append(Self.digits[Int(chunk >> 12 & 63)])
            if rest == 2 { out.append(Self.digits[Int(chunk >> 6 & 63)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes base64url (or base64), padding optional; nil when it is not.
    public static func decode(_ text: String) -> [UInt8]? {
        Base64.decode(Array(text.utf8))
    }
}
