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
        var input = Array(encoded)
        while input.last == UInt8(ascii: "=") { input.removeLast() }
        if input.count % 4 == 1 { return nil }
        var output = [UInt8]()
        output.reserveCapacity(input.count * 3 / 4)
        let table = Self.table
        return input.withUnsafeBufferPointer { bytes -> [UInt8]? in
            var index = 0
            let whole = bytes.count - bytes.count % 4
            while index < whole {
                let a = table[Int(bytes[index])], b = table[Int(bytes[index + 1])]
                let c = table[Int(bytes[index + 2])], d = table[Int(bytes[index + 3])]
                guard (a | b | c | d) & 0xC0 == 0 else { return nil }
                output.append(a << 2 | b >> 4)
                output.append(b << 4 | c >> 2)
                output.append(c << 6 | d)
                index += 4
            }
            let remaining = bytes.count - whole
            if remaining >= 2 {
                let a = table[Int(bytes[index])], b = table[Int(bytes[index + 1])]
                guard (a | b) & 0xC0 == 0 else { return nil }
                output.append(a << 2 | b >> 4)
                if remaining == 3 {
                    let c = table[Int(bytes[index + 2])]
                    guard c & 0xC0 == 0 else { return nil }
                    output.append(b << 4 | c >> 2)
                }
            }
            return output
        }
    }
}
