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
            table.withUnsafeBufferPointer { table in
                var input = 0
                var index = 0
                let whole = length - length % 4
                var invalid: UInt8 = 0
                while input < whole {
                    let a = table[Int(buffer[input])], b = table[Int(buffer[input + 1])]
                    let c = table[Int(buffer[input + 2])], d = table[Int(buffer[input + 3])]
                    invalid |= a | b | c | d
                    out[index] = a << 2 | b >> 4
                    out[index + 1] = b << 4 | c >> 2
                    out[index + 2] = c << 6 | d
                    input += 4
                    index += 3
                }
                let remaining = length - whole
                if remaining >= 2 {
                    let a = table[Int(buffer[input])], b = table[Int(buffer[input + 1])]
                    invalid |= a | b
                    out[index] = a << 2 | b >> 4
                    index += 1
                    if remaining == 3 {
                        let c = table[Int(buffer[input + 2])]
                        invalid |= c
                        out[index] = b << 4 | c >> 2
                        index += 1
                    }
                }
                valid = invalid & 0xC0 == 0
                initialized = index
            }
        }
        return valid ? output : nil
    }
}
