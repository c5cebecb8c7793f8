import Foundation

/// Fresh nonces for offer signatures: a random (version 4) UUID in lowercase text, from the system's CSPRNG, written
/// directly (Foundation's `UUID().uuidString.lowercased()` cost a quarter of a P-256 signature here).
enum OfferNonce {
    private static let hex = Array("0123456789abcdef".utf8)

    /// A new nonce, or `given`'s lowercase text.
    static func text(_ given: UUID?) -> String {
        if let given { return given.uuidString.lowercased() }
        var generator = SystemRandomNumberGenerator()
        var high: UInt64 = generator.next()
        var low: UInt64 = generator.next()
        high = (high & ~0xF000) | 0x4000  // version 4
        low = (low & ~(0xC000 << 48)) | (0x8000 << 48)  // variant 10
        var out = [UInt8]()
        out.reserveCapacity(36)
        for nibble in 0..<32 {
            if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 { out.append(UInt8(ascii: "-")) }
            let word = nibble < 16 ? high : low
            let shift = UInt64(60 - (nibble % 16) * 4)
            out.append(Self.hex[Int(word >> shift & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
