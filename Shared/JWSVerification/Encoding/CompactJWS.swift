import Foundation

/// A compact JWS (`header.payload.signature`) split into its three base64url segments, without copying.
struct CompactJWS: Sendable {
    /// The whole serialization, as bytes (a slice of the caller's array when it gave one: ingest's body is not copied).
    let bytes: ArraySlice<UInt8>
    /// The protected header segment (still base64url).
    let header: ArraySlice<UInt8>
    /// The payload segment (still base64url).
    let payload: ArraySlice<UInt8>
    /// The signature segment (still base64url).
    let signature: ArraySlice<UInt8>

    /// The bytes the signature covers: `header.payload` in their encoded form.
    var signingInput: ArraySlice<UInt8> {
        self.bytes[self.header.startIndex..<self.payload.endIndex]
    }

    /// Splits a compact serialization; surrounding whitespace (a trailing newline in a file) is ignored.
    init(_ text: some Collection<UInt8>) throws(VerificationError) {
        let bytes: ArraySlice<UInt8> =
            (text as? ArraySlice<UInt8>) ?? (text as? [UInt8])?[...]
            ?? ArraySlice(text.withContiguousStorageIfAvailable { Array($0) } ?? Array(text))
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, Self.isWhitespace(bytes[start]) { start += 1 }
        while end > start, Self.isWhitespace(bytes[end - 1]) { end -= 1 }
        guard let firstDot = Self.firstDot(in: bytes, from: start, to: end),
            let secondDot = Self.firstDot(in: bytes, from: firstDot + 1, to: end)
        else {
            throw VerificationError(.format, "a compact JWS has 3 dot-separated parts, found fewer")
        }
        guard Self.firstDot(in: bytes, from: secondDot + 1, to: end) == nil else {
            throw VerificationError(.format, "a compact JWS has 3 dot-separated parts, found more")
        }
        self.bytes = bytes
        self.header = bytes[start..<firstDot]
        self.payload = bytes[(firstDot + 1)..<secondDot]
        self.signature = bytes[(secondDot + 1)..<end]
        guard !self.header.isEmpty, !self.payload.isEmpty, !self.signature.isEmpty else {
            throw VerificationError(.format, "a compact JWS needs a non-empty header, payload and signature")
        }
    }

    /// The index of the first `.` in `bytes[start..<end]`, found with `memchr` (a JWS is ~20 KB of base64url).
    private static func firstDot(in bytes: ArraySlice<UInt8>, from start: Int, to end: Int) -> Int? {
        guard start < end else { return nil }
        return bytes.withUnsafeBufferPointer { buffer -> Int? in
            let base = buffer.baseAddress!  // at bytes.startIndex
            let from = start - bytes.startIndex
            guard let found = memchr(base + from, Int32(UInt8(ascii: ".")), end - start) else { return nil }
            return bytes.startIndex + base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Space, tab, CR or LF: what may surround a JWS read from a file.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// Decodes the payload segment's base64url into the payload bytes.
    func decodedPayload() throws(VerificationError) -> [UInt8] {
        guard let decoded = Base64.decode(self.payload) else {
            throw VerificationError(.format, "the payload is not base64url")
        }
        return decoded
    }

    /// Decodes the signature segment into the raw 64-byte r‖s form ES256 uses.
    func rawSignature() throws(VerificationError) -> [UInt8] {
        guard let decoded = Base64.decode(self.signature) else {
            throw VerificationError(.signature, "the signature is not base64url")
        }
        guard decoded.count == 64 else {
            throw VerificationError(
                .signature,
                "an ES256 signature is 64 bytes of raw r‖s, found \(decoded.count) bytes (DER is not accepted)")
        }
        return decoded
    }
}
