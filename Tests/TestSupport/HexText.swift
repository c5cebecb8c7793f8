/// Hex text back to bytes, for tests that read ids written as hex (trace ids, span ids): the inverse of
/// `Hex.encode`. The product only writes hex, so the reader lives with the tests.
public enum HexText {
    /// The bytes that hex `text` spells, two digits a byte (either case); nil for an odd count or a non-digit.
    public static func bytes(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 2)
        var high: UInt8?
        for byte in text {
            guard let digit = Self.value(byte) else { return nil }
            if let first = high {
                out.append(first << 4 | digit)
                high = nil
            } else {
                high = digit
            }
        }
        return out
    }

    /// The bytes that hex `text` spells; nil as ``bytes(_:)-(Collection<UInt8>)``.
    public static func bytes(_ text: String) -> [UInt8]? { Self.bytes(Array(text.utf8)) }

    /// The value of one hex digit.
    private static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
