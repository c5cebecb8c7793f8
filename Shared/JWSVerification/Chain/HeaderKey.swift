import Foundation

/// The key of a ``HeaderCache``: the exact bytes of a JWS protected header.
///
/// Equality compares every byte (`memcmp`); the hash covers the length and the first and last bytes only
/// (``hashedPrefix``, ``hashedSuffix``): the leaf certificate, which tells chains apart, starts within the first
/// hundred bytes of the ~4 KB header, and hashing all of it three times per notification cost 2 % of the
/// chain-verifier. Keys that share those bytes only share a bucket; the cache holds a few dozen chains, and only
/// chains that verified get in (ingest's header facts: a few dozen too).
struct HeaderKey: Hashable, Sendable {
    /// How many leading bytes the hash covers.
    static let hashedPrefix = 512
    /// How many trailing bytes the hash covers.
    static let hashedSuffix = 64

    /// The header bytes (base64url text, as in the JWS).
    let bytes: ArraySlice<UInt8>

    /// A key for looking a header up: it refers to the JWS's own bytes, without copying them.
    init(lookingUp header: ArraySlice<UInt8>) {
        self.bytes = header
    }

    /// A key to store: a copy of the header, so the cache does not keep the whole JWS alive.
    init(storing header: ArraySlice<UInt8>) {
        self.bytes = Array(header)[...]
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(self.bytes.count)
        self.bytes.withUnsafeBytes { bytes in
            if bytes.count <= Self.hashedPrefix + Self.hashedSuffix {
                hasher.combine(bytes: bytes)
            } else {
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes.prefix(Self.hashedPrefix)))
                hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes.suffix(Self.hashedSuffix)))
            }
        }
    }

    static func == (lhs: HeaderKey, rhs: HeaderKey) -> Bool {
        guard lhs.bytes.count == rhs.bytes.count else { return false }
        guard !lhs.bytes.isEmpty else { return true }
        return lhs.bytes.withUnsafeBytes { left in
            rhs.bytes.withUnsafeBytes { right in memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0 }
        }
    }
}
