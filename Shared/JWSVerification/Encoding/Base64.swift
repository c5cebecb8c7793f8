/// Fast base64 and base64url decoding over bytes.
///
/// Foundation's decoder accepts only the standard alphabet with padding, so JWS segments would first have
/// to be copied and rewritten as Strings; this decodes the bytes in place, accepting both alphabets and
/// optional padding, and rejects anything else.
enum Base64 {
    /// Maps an ASCII byte to its 6-bit value; 0xFF marks a byte that is not in either alphabet.
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()

    /// The 6-bit value of a byte already shifted to its place in a 4-character group's 24 bits, for each of the
    /// four places (256 entries each); a byte in neither alphabet sets bit 31. A group then decodes with four
    /// look-ups and three ORs.
    private static let placedTable: [UInt32] = {
        var placed = [UInt32](repeating: 0, count: 4 * 256)
        for place in 0..<4 {
            for byte in 0..<256 {
                let value = Self.table[byte]
                placed[place * 256 + byte] = value == 0xFF ? 1 << 31 : UInt32(value) << (18 - 6 * place)
            }
        }
        return placed
    }()

    /// Decodes base64 or base64url text (padding optional), or returns nil if it is not valid.
    static func decode(_ encoded: some Collection<UInt8>) -> [UInt8]? {
        let decoded: [UInt8]?? = encoded.withContiguousStorageIfAvailable { Self.decode(buffer: $0) }
        if let decoded { return decoded }
        return Array(encoded).withUnsafeBufferPointer { Self.decode(buffer: $0) }
    }

    /// Decodes from contiguous bytes straight into a preallocated array.
    private static func decode(buffer: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var length = buffer.count
        while length > 0, buffer[length - 1] == UInt8(ascii: "=") { length -= 1 }
        if length % 4 == 1 { return nil }
        let outputCount = length / 4 * 3 + max(0, length % 4 - 1)
        let table = Self.table
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: outputCount) { out, initialized in
            Self.placedTable.withUnsafeBufferPointer { placed in
                table.withUnsafeBufferPointer { table in
                    var input = 0
                    var index = 0
                    let whole = length - length % 4
                    var invalid: UInt32 = 0
                    while input < whole {
                        let group =
                            placed[Int(buffer[input])] | placed[256 + Int(buffer[input + 1])]
                            | placed[512 + Int(buffer[input + 2])] | placed[768 + Int(buffer[input + 3])]
                        invalid |= group
                        out[index] = UInt8(truncatingIfNeeded: group >> 16)
                        out[index + 1] = UInt8(truncatingIfNeeded: group >> 8)
                        out[index + 2] = UInt8(truncatingIfNeeded: group)
                        input += 4
                        index += 3
                    }
                    var invalidTail: UInt8 = 0
                    let remaining = length - whole
                    if remaining >= 2 {
                        let a = table[Int(buffer[input])], b = table[Int(buffer[input + 1])]
                        invalidTail |= a | b
                        out[index] = a << 2 | b >> 4
                        index += 1
                        if remaining == 3 {
                            let c = table[Int(buffer[input + 2])]
                            invalidTail |= c
                            out[index] = b << 4 | c >> 2
                            index += 1
                        }
                    }
                    valid = invalid & (1 << 31) == 0 && invalidTail & 0xC0 == 0
                    initialized = index
                }
            }
        }
        return valid ? output : nil
    }
}
