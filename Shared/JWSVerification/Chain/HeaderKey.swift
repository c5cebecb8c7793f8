import Foundation

/// The cache key of a verified chain: the exact bytes of a JWS protected header.
///
/// Hashes all bytes in one call (`Hasher.combine(bytes:)`) and compares with `memcmp`-speed equality;
/// the element-wise hashing of `ArraySlice<UInt8>` cost a tenth of all verification time.
struct HeaderKey: Hashable, Sendable {
    /// The header bytes (base64url text, as in the JWS).
    let bytes: [UInt8]

    /// Copies a header segment into a key.
    init(_ header: ArraySlice<UInt8>) {
        self.bytes = Array(header)
    }

    func hash(into hasher: inout Hasher) {
        self.bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (lhs: HeaderKey, rhs: HeaderKey) -> Bool {
        guard lhs.bytes.count == rhs.bytes.count else { return false }
        guard !lhs.bytes.isEmpty else { return true }
        return lhs.bytes.withUnsafeBytes { left in
            rhs.bytes.withUnsafeBytes { right in memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0 }
        }
    }
}
