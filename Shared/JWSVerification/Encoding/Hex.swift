/// Lower-case hexadecimal text of bytes: the one hex encoder of the project (key ids, ETags, digests in logs).
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Two lower-case digits per byte.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(Self.digits[Int(byte >> 4)])
            out.append(Self.digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
