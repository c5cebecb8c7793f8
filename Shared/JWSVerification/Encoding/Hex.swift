/// Lower-case hexadecimal text of bytes: the one hex encoder of the project (key ids, ETags, digests in logs).
public enum Hex {
    /// The lower-case digit of a value below 16 (its UTF-8 byte): the one digit table of the project's hex writers.
    @inlinable
    public static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// Two lower-case digits per byte.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(Self.digit(byte >> 4))
            out.append(Self.digit(byte & 0x0F))
        }
        return String(decoding: out, as: UTF8.self)
    }
}
