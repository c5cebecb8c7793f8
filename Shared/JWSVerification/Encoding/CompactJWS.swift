/// A compact JWS (`header.payload.signature`) split into its three base64url segments, without copying.
struct CompactJWS {
    /// The whole serialization, as bytes.
    let bytes: [UInt8]
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
        var bytes = Array(text)
        while let last = bytes.last, last == 0x20 || last == 0x0A || last == 0x0D || last == 0x09 { bytes.removeLast() }
        var start = 0
        while start < bytes.count, bytes[start] == 0x20 || bytes[start] == 0x0A || bytes[start] == 0x0D || bytes[start] == 0x09 {
            start += 1
        }
        let dots = bytes.indices.dropFirst(start).filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else {
            throw VerificationError(.format, "a compact JWS has 3 dot-separated parts, found \(dots.count + 1)")
        }
        self.bytes = bytes
        self.header = bytes[start..<dots[0]]
        self.payload = bytes[(dots[0] + 1)..<dots[1]]
        self.signature = bytes[(dots[1] + 1)...]
        guard !self.header.isEmpty, !self.payload.isEmpty, !self.signature.isEmpty else {
            throw VerificationError(.format, "a compact JWS needs a non-empty header, payload and signature")
        }
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
                .signature, "an ES256 signature is 64 bytes of raw r‖s, found \(decoded.count) bytes (DER is not accepted)")
        }
        return decoded
    }
}
