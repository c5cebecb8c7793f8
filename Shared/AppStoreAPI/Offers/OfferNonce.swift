import AppStoreModels
import Foundation

/// Fresh nonces for offer signatures: a random (version 4) UUID (``RandomUUID``, one `getrandom` call) in lowercase
/// text, written directly (Foundation's `UUID().uuidString.lowercased()` cost a quarter of a P-256 signature here).
enum OfferNonce {
    private static let hex = Array("0123456789abcdef".utf8)

    /// A new nonce, or `given`'s lowercase text.
    static func text(_ given: UUID?) -> String {
        if let given { return given.uuidString.lowercased() }
        var uuid = RandomUUID.bytes()
        return withUnsafeBytes(of: &uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { out in
                var index = 0
                for (position, byte) in bytes.enumerated() {
                    if position == 4 || position == 6 || position == 8 || position == 10 {
                        out[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    out[index] = Self.hex[Int(byte >> 4)]
                    out[index + 1] = Self.hex[Int(byte & 0xF)]
                    index += 2
                }
                return index
            }
        }
    }
}
