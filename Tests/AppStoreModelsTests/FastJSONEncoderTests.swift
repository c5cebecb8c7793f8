import Foundation
import TestSupport
import Testing

@testable import AppStoreModels

/// `FastJSONEncoder` against `JSONEncoder`, the encoder it replaces in the updater: with sorted keys (the events'
/// canonical JSON) the same bytes, with and without escaped slashes; unsorted (`JSONEncoder` then writes keys in hash
/// order) the same JSON value. On Apple's models decoded from every fixture, edge-case strings and numbers, thousands
/// of generated values, and the cases it hands to `JSONEncoder`.
@Suite struct FastJSONEncoderTests {
    // MARK: A model with every kind of member

    enum Kind: String, Codable, CaseIterable {
        case alpha, beta
        case slash = "a/b"
    }

    struct Inner: Codable, Equatable {
        var name: String
        var count: Int32?
        var tags: [String]
        var flags: [Bool?]
    }

    struct Sample: Codable, Equatable {
        var text: String
        var optionalText: String?
        var int: Int
        var int8: Int8
        var int16: Int16
        var int32: Int32
        var int64: Int64
        var uint: UInt
        var uint8: UInt8
        var uint16: UInt16
        var uint32: UInt32
        var uint64: UInt64
        var double: Double
        var float: Float
        var flag: Bool
        var kind: Kind
        var inner: Inner
        var inners: [Inner]
        var byName: [String: Int64]
        var byNumber: [Int: String]
        var nested: [[Int?]]
        var optionalInner: Inner?
        var empty: Empty
        var zKey: Int = 0
        var AKey: Int = 1
        var a_key: Int = 2
    }

    /// A value that encodes nothing (`{}` in a parent, as in `JSONEncoder`).
    struct Empty: Codable, Equatable {
        func encode(to encoder: any Encoder) throws {}
        init() {}
        init(from decoder: any Decoder) throws {}
    }

    /// Strings that exercise escaping: quotes, backslashes, slashes, every kind of control character, DEL, line
    /// separators, accents, emoji, and plain text.
    static let strings = [
        "", "plain", "a/b", "\"quoted\"", "back\\slash", "\u{0}\u{1}\u{7}\u{8}\u{9}\u{A}\u{B}\u{C}\u{D}\u{1F}",
        "\u{7F}",
        "line\u{2028}sep\u{2029}", "é", "e\u{301}", "😀 emoji", "https://example.com/a?b=c&d=/e", "ß∂ƒ©", "\t\n\r",
        String(repeating: "x", count: 300),
    ]

    /// Doubles whose text differs between formatters: integers, exponents, negative zero, extremes.
    static let doubles: [Double] = [
        0, -0.0, 1, -1, 0.1, 0.5, 1e20, 1e-7, 123_456_789.125, 3e15, 1e16, 1e-6, .pi, -2.5e-300,
        .greatestFiniteMagnitude, .leastNonzeroMagnitude, 4_503_599_627_370_496, 9_007_199_254_740_993,
    ]

    static func sample(_ random: inout SeededGenerator) -> Sample {
        func string() -> String {
            random.next() % 3 == 0
                ? Self.strings.randomElement(using: &random)!
                : String(
                    (0..<Int.random(in: 0...12, using: &random)).map { _ in
                        Character(UnicodeScalar(UInt8.random(in: 0x20...0x7E, using: &random)))
                    })
        }
        func inner() -> Inner {
            Inner(
                name: string(),
                count: Bool.random(using: &random) ? Int32.random(in: .min ... .max, using: &random) : nil,
                tags: (0..<Int.random(in: 0...3, using: &random)).map { _ in string() },
                flags: [true, nil, false].shuffled(using: &random))
        }
        return Sample(
            text: string(), optionalText: Bool.random(using: &random) ? string() : nil,
            int: Int.random(in: .min ... .max, using: &random), int8: .random(in: .min ... .max, using: &random),
            int16: .random(in: .min ... .max, using: &random), int32: .random(in: .min ... .max, using: &random),
            int64: .random(in: .min ... .max, using: &random), uint: .random(in: .min ... .max, using: &random),
            uint8: .random(in: .min ... .max, using: &random), uint16: .random(in: .min ... .max, using: &random),
            uint32: .random(in: .min ... .max, using: &random), uint64: .random(in: .min ... .max, using: &random),
            double: random.next() % 2 == 0
                ? Self.doubles.randomElement(using: &random)! : Double.random(in: -1e9...1e9, using: &random),
            float: Float.random(in: -1000...1000, using: &random), flag: Bool.random(using: &random),
            kind: Kind.allCases.randomElement(using: &random)!, inner: inner(),
            inners: (0..<Int.random(in: 0...3, using: &random)).map { _ in inner() },
            byName: Dictionary(
                (0..<Int.random(in: 0...5, using: &random)).map { _ in
                    (string(), Int64.random(in: -9...9, using: &random))
                },
                uniquingKeysWith: { first, _ in first }),
            byNumber: Dictionary(
                (0..<Int.random(in: 0...3, using: &random)).map { _ in
                    (Int.random(in: -99...99, using: &random), string())
                },
                uniquingKeysWith: { first, _ in first }),
            nested: [[1, nil, 3], [], [nil]], optionalInner: Bool.random(using: &random) ? inner() : nil, empty: Empty()
        )
    }

    /// Requires the bytes of `JSONEncoder` with sorted keys (with and without escaped slashes), and the same JSON value
    /// unsorted.
    /// With `written` true (false), the bytes must be (must not be) the encoder's own rather than `JSONEncoder`'s;
    /// nil: either. Returns in how many of the two sorted modes the encoder wrote them itself.
    @discardableResult
    static func expectSame<Value: Encodable>(
        _ value: Value, written: Bool? = true, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Int {
        var byItself = 0
        for escapesSlashes in [false, true] {
            let fast = FastJSONEncoder(sortsKeys: true, escapesSlashes: escapesSlashes)
            let own = try fast.writtenBytes(value) != nil
            if own { byItself += 1 }
            #expect(written == nil || own == written, "written by the encoder itself", sourceLocation: sourceLocation)
            let expected = try fast.foundationEncoder.encode(value)
            let bytes = try fast.encode(value)
            #expect(
                bytes == Array(expected),
                "\(String(decoding: bytes, as: UTF8.self).prefix(300)) ≠ \(String(decoding: expected, as: UTF8.self).prefix(300))",
                sourceLocation: sourceLocation)
        }
        let unsorted = try FastJSONEncoder().encode(value)
        let parsed = try JSONDecoder().decode(JSONValue.self, from: Data(unsorted))
        let expected = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
        #expect(
            parsed == expected, "unsorted: \(String(decoding: unsorted, as: UTF8.self).prefix(300))",
            sourceLocation: sourceLocation)
        return byItself
    }

    // MARK: Tests

    @Test func appleModelsFromEveryFixtureEncodeToTheSameBytes() throws {
        var encoded = 0
        /// Compares the encodings of `json` decoded as `type`, when it decodes as one.
        func expectSameIfItDecodes<Value: Codable>(_ type: Value.Type, _ json: [UInt8]) throws {
            guard let value = try? JSONDecoder().decode(type, from: Data(json)) else { return }
            try Self.expectSame(value)
            encoded += 1
        }
        for (_, json) in try FastJSONDecoderTests.corpus() {
            try expectSameIfItDecodes(ResponseBodyV2DecodedPayload.self, json)
            try expectSameIfItDecodes(JWSTransactionDecodedPayload.self, json)
            try expectSameIfItDecodes(JWSRenewalInfoDecodedPayload.self, json)
            try expectSameIfItDecodes(JSONValue.self, json)
        }
        #expect(encoded > 100)
    }

    @Test func edgeCaseStringsAndNumbersEncodeToTheSameBytes() throws {
        for string in Self.strings {
            try Self.expectSame(string)
            try Self.expectSame(["k": [string, nil]])
            // As a key: one that needs escaping goes to JSONEncoder.
            let plainKey = !string.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
            let written = try Self.expectSame([string: string], written: plainKey && !string.contains("/") ? true : nil)
            #expect(!plainKey || written >= 1, "a key without a character to escape is written: \(string)")
        }
        for double in Self.doubles {
            try Self.expectSame(double)
            try Self.expectSame(["d": double, "e": -double])
            try Self.expectSame([Float(double)].filter(\.isFinite))
        }
        try Self.expectSame([Int64.min, Int64.max, 0, -1, 9, 10])
        try Self.expectSame([UInt64.max, 0])
        try Self.expectSame([Int32.min, Int32.max, -10, 100])
        try Self.expectSame([Int8.min, Int8.max])
        try Self.expectSame(["a": true, "b": false])
        try Self.expectSame([String?.none])
        // A top-level value that encodes nothing: JSONEncoder's answer, whatever it is.
        let expected = try? JSONEncoder().encode(Empty())
        #expect((try? FastJSONEncoder().encode(Empty())) == expected.map(Array.init))
    }

    @Test func generatedValuesEncodeToTheSameBytes() throws {
        var random = SeededGenerator(seed: 39)
        var written = 0
        for _ in 0..<2_000 { written += try Self.expectSame(Self.sample(&random), written: nil) }
        #expect(written > 2_000, "most were written by the encoder itself (keys needing escapes are not): \(written)")
    }

    @Test func whatItDoesNotReproduceGoesToJSONEncoder() throws {
        struct Special: Encodable {
            var date = Date(timeIntervalSinceReferenceDate: 12.5)
            var data = Data([1, 2, 3, 255])
            var url = URL(string: "https://example.com/a?b=c")!
            var decimal = Decimal(string: "12.50")!
        }
        try Self.expectSame(Special(), written: false)
        try Self.expectSame(["a\"b": 1, "c\u{1}": 3, "plain": 4], written: false)

        /// Writes one key twice (JSONEncoder keeps the last value) and uses a super encoder.
        struct Awkward: Encodable {
            enum Keys: String, CodingKey { case a, b, c }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode(1, forKey: .a)
                try container.encode(2, forKey: .b)
                try container.encode(3, forKey: .a)
                var nested = container.nestedUnkeyedContainer(forKey: .c)
                try nested.encode("x")
                try container.encode(4, forKey: .b)
                try nested.encode("late")  // written after a later sibling: JSONEncoder keeps it
            }
        }
        try Self.expectSame(Awkward(), written: false)
        struct WithSuper: Encodable {
            enum Keys: String, CodingKey { case own }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Keys.self)
                try container.encode("mine", forKey: .own)
                var parent = container.superEncoder().singleValueContainer()
                try parent.encode("parent's")
            }
        }
        try Self.expectSame(WithSuper(), written: false)
    }

    @Test func aNumberThatIsNotFiniteIsAnErrorAsInJSONEncoder() {
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(throws: EncodingError.self) { try FastJSONEncoder.canonical.encode(["x": value]) }
            #expect(throws: EncodingError.self) { try JSONEncoder().encode(["x": value]) }
        }
    }
}
