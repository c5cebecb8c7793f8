import Foundation

/// Apple's notification payload JSON with the nested JWS strings replaced by `null`, for the verified record:
/// those strings stand in the raw message, and the rest is passed on as Apple signed it instead of being
/// encoded again from the decoded values.
///
/// A small scanner, not a search: it walks the JSON's string tokens (escapes included) and replaces a value
/// only where a key named as given is followed by a string equal to the given value, so text that merely
/// looks like one inside another string is never touched.
enum SignedStringRemoval {
    /// `json` with the string value of every `key` whose value is exactly `value` replaced by `null`; nil when
    /// one of the pairs does not occur (the caller then encodes the decoded payload instead).
    static func replacingWithNull(_ pairs: [(key: String, value: String)], in json: [UInt8]) -> [UInt8]? {
        guard !pairs.isEmpty else { return json }
        // Keys and values (kilobytes each) are compared where they are, not copied.
        let keys = pairs.map(\.key)
        let values = pairs.map(\.value)
        var found = [Bool](repeating: false, count: pairs.count)
        var out: [UInt8] = []
        out.reserveCapacity(max(0, json.count - values.reduce(0) { $0 + $1.utf8.count }))
        let complete: Bool = json.withUnsafeBufferPointer { bytes in
            var copied = 0
            var index = 0
            while let key = Self.nextString(in: bytes, from: index) {
                index = key.upperBound + 1
                var colon = index
                while colon < bytes.count, Self.isWhitespace(bytes[colon]) { colon += 1 }
                guard colon < bytes.count, bytes[colon] == UInt8(ascii: ":"),
                    let which = keys.firstIndex(where: { Self.equal(bytes, key, $0) })
                else { continue }
                var valueStart = colon + 1
                while valueStart < bytes.count, Self.isWhitespace(bytes[valueStart]) { valueStart += 1 }
                guard valueStart < bytes.count, bytes[valueStart] == UInt8(ascii: "\""),
                    let value = Self.nextString(in: bytes, from: valueStart)
                else { continue }
                index = value.upperBound + 1
                guard Self.equal(bytes, value, values[which]) else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<valueStart]))
                out.append(contentsOf: "null".utf8)
                copied = index
                found[which] = true
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied...]))
            return found.allSatisfy { $0 }
        }
        return complete ? out : nil
    }

    // MARK: Scanning

    /// The contents (between the quotes) of the first string token at or after `start`, which must lie outside
    /// any string; nil when there is none or it is not closed.
    private static func nextString(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Range<Int>? {
        guard let open = Self.find(UInt8(ascii: "\""), in: bytes, from: start) else { return nil }
        var search = open + 1
        while let close = Self.find(UInt8(ascii: "\""), in: bytes, from: search) {
            var backslashes = 0
            while close - backslashes - 1 > open, bytes[close - backslashes - 1] == UInt8(ascii: "\\") {
                backslashes += 1
            }
            if backslashes % 2 == 0 { return (open + 1)..<close }
            search = close + 1
        }
        return nil
    }

    /// The first index of `byte` at or after `start` (`memchr`: the strings here are kilobytes long).
    private static func find(_ byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress,
            let found = memchr(base + start, Int32(byte), bytes.count - start)
        else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    /// Whether the bytes at `range` are exactly `expected`'s UTF-8 (in place for a native string).
    private static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ expected: String) -> Bool {
        guard range.count == expected.utf8.count else { return false }
        return expected.utf8.withContiguousStorageIfAvailable { Self.equal(bytes, range, $0) }
            ?? Array(expected.utf8).withUnsafeBufferPointer { Self.equal(bytes, range, $0) }
    }

    /// Whether the bytes at `range` are exactly `expected`.
    private static func equal(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ expected: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        guard range.count == expected.count else { return false }
        guard let base = expected.baseAddress, !expected.isEmpty else { return true }
        return memcmp(bytes.baseAddress! + range.lowerBound, base, range.count) == 0
    }

    /// JSON's insignificant whitespace.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
