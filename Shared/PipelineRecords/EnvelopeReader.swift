import AppStoreModels
import Foundation

/// Reads `signedPayload` out of Apple's body.
///
/// Apple's body is always `{"signedPayload":"<JWS>"}`, and a JWS is base64url and dots, which JSON never
/// escapes; the fast path finds it by a byte scan instead of a JSON decode of ~20 KB, allowing JSON whitespace
/// around every token (`{"signedPayload": "…"}` as many clients write it). It takes any string of printable
/// ASCII without escapes, whose value is its bytes, so it returns what the decode would. Anything else (more
/// keys, escapes, control characters, non-ASCII text) goes through `JSONDecoder`.
public enum EnvelopeReader {
    private static let key = Array(#""signedPayload""#.utf8)

    /// The signed payload, or nil when the body is not `{"signedPayload": "<string>"}` JSON.
    public static func signedPayload(in body: [UInt8]) -> String? {
        if let range = Self.fastPath(body) { return String(decoding: body[range], as: UTF8.self) }
        return Self.decoded(body)
    }

    /// The signed payload's UTF-8 bytes (a slice of `body` on the fast path, no copy), or nil as above.
    public static func signedPayloadBytes(in body: [UInt8]) -> ArraySlice<UInt8>? {
        if let range = Self.fastPath(body) { return body[range] }
        return Self.decoded(body).map { Array($0.utf8)[...] }
    }

    /// The general path: a JSON decode of the whole body.
    private static func decoded(_ body: [UInt8]) -> String? {
        (try? JSONDecoder().decode(ResponseBodyV2.self, from: Data(body)))?.signedPayload
    }

    /// Where the string is in a body of exactly `{ "signedPayload" : "<JWS characters>" }` (JSON whitespace
    /// anywhere between tokens), or nil for any other body.
    private static func fastPath(_ body: [UInt8]) -> Range<Int>? {
        body.withUnsafeBufferPointer { bytes -> Range<Int>? in
            var index = 0
            func skipWhitespace() {
                while index < bytes.count, Self.isWhitespace(bytes[index]) { index += 1 }
            }
            func take(_ byte: UInt8) -> Bool {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == byte else { return false }
                index += 1
                return true
            }
            guard take(UInt8(ascii: "{")) else { return nil }
            skipWhitespace()
            guard bytes.count - index >= Self.key.count,
                Self.key.indices.allSatisfy({ bytes[index + $0] == Self.key[$0] })
            else { return nil }
            index += Self.key.count
            guard take(UInt8(ascii: ":")), take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            guard let end = Self.plainStringEnd(bytes, from: start) else { return nil }
            index = end + 1
            guard take(UInt8(ascii: "}")) else { return nil }
            skipWhitespace()
            return index == bytes.count ? start..<end : nil
        }
    }

    /// JSON's insignificant whitespace: space, tab, LF, CR.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// Where the JSON string whose text starts at `start` ends (its closing `"`), if that text is printable ASCII
    /// without a backslash, so its bytes are its value. Nil otherwise (an escape, a control character, non-ASCII
    /// text, no closing quote): the general path decodes those. `memchr` finds the quote and any backslash, and
    /// the rest is checked 8 bytes at a time: the scan runs over every byte of a ~19 KB body, and a byte-wise
    /// table scan cost 2 % of the chain-verifier.
    private static func plainStringEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress,
            let quote = memchr(base + start, Int32(UInt8(ascii: "\"")), bytes.count - start)
        else { return nil }
        let end = base.distance(to: quote.assumingMemoryBound(to: UInt8.self))
        guard memchr(base + start, Int32(UInt8(ascii: "\\")), end - start) == nil else { return nil }
        // A byte below 0x20 borrows into its high bit when 0x20 is subtracted; a non-ASCII byte has it set.
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let spaces: UInt64 = 0x2020_2020_2020_2020
        var index = start
        while index + 8 <= end {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            guard (word | (word &- spaces)) & highBits == 0 else { return nil }
            index += 8
        }
        while index < end {
            guard bytes[index] >= 0x20, bytes[index] < 0x80 else { return nil }
            index += 1
        }
        return end
    }
}
