import AppStoreModels
import Foundation
import TestSupport
import Testing

/// `FastJSONDecoder` against `JSONDecoder`, the decoder it replaces on the hot paths: the same values from Apple's
/// fixtures and real signed payloads, malformed text refused, and the same outcome on thousands of deterministic
/// mutations of real payloads.
@Suite struct FastJSONDecoderTests {
    /// What a decoding gave: the value, or that it failed.
    enum Outcome<Value: Equatable>: Equatable {
        case value(Value)
        case failed
    }

    static func outcome<Value: Decodable & Equatable>(_ type: Value.Type, _ bytes: [UInt8], fast: Bool) -> Outcome<
        Value
    > {
        do {
            return .value(
                fast
                    ? try FastJSONDecoder().decode(type, from: bytes)
                    : try JSONDecoder().decode(type, from: Data(bytes)))
        } catch {
            return .failed
        }
    }

    /// Requires `FastJSONDecoder` to give `JSONDecoder`'s outcome for `bytes` as `type` when the text is JSON, and
    /// to refuse it when it is not; returns whether it decoded. (`JSONDecoder` checks a value only when a model
    /// reads it, so it accepts malformed text — `01`, `"\q"`, a control character — in members a model skips;
    /// whether the text is JSON is whether `JSONDecoder` decodes all of it, as a ``JSONValue``.)
    @discardableResult
    static func expectSame<Value: Decodable & Equatable>(
        _ type: Value.Type, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let isJSON = Self.outcome(JSONValue.self, bytes, fast: false) != .failed
        let expected = isJSON ? Self.outcome(type, bytes, fast: false) : .failed
        let fast = Self.outcome(type, bytes, fast: true)
        #expect(
            fast == expected, "\(type) from \(String(decoding: bytes, as: UTF8.self).prefix(200))",
            sourceLocation: sourceLocation)
        return expected != .failed
    }

    /// The JSON texts of Apple's model fixtures and of the payloads of every signed fixture (real sandbox
    /// notifications, Xcode's, Apple's mock signed data).
    static func corpus() throws -> [(name: String, json: [UInt8])] {
        var corpus: [(String, [UInt8])] = []
        let models = Fixtures.url("apple/models")
        for file in try FileManager.default.contentsOfDirectory(atPath: models.path).sorted()
        where file.hasSuffix(".json") {
            corpus.append((file, try Fixtures.bytes("apple/models/\(file)")))
        }
        for directory in ["real-sandbox", "apple/xcode", "apple/mock_signed_data"] {
            for file in try FileManager.default.contentsOfDirectory(atPath: Fixtures.url(directory).path).sorted() {
                let text = (try? Fixtures.text("\(directory)/\(file)")) ?? ""
                let segments = text.split(separator: ".")
                guard segments.count == 3, let payload = Self.base64URL(segments[1]) else { continue }
                corpus.append(("\(directory)/\(file)", payload))
            }
        }
        return corpus
    }

    static func base64URL(_ segment: Substring) -> [UInt8]? {
        var text = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text).map(Array.init)
    }

    // MARK: Real payloads

    @Test func decodesEveryFixtureAsJSONDoes() throws {
        let corpus = try Self.corpus()
        #expect(corpus.count > 40)
        var decodedModels = 0
        for (_, json) in corpus {
            #expect(Self.expectSame(JSONValue.self, json))
            for decoded in [
                Self.expectSame(ResponseBodyV2DecodedPayload.self, json),
                Self.expectSame(JWSTransactionDecodedPayload.self, json),
                Self.expectSame(JWSRenewalInfoDecodedPayload.self, json),
                Self.expectSame(AppTransaction.self, json),
            ] where decoded {
                decodedModels += 1
            }
        }
        #expect(decodedModels > 60)  // the comparisons above compared values, not only failures
    }

    @Test func realNotificationDecodesToTheSameValues() throws {
        let text = try Fixtures.text("real-sandbox/signedPayload_DID_RENEW")
        let payload = try #require(Self.base64URL(text.split(separator: ".")[1]))
        let fast = try FastJSONDecoder().decode(ResponseBodyV2DecodedPayload.self, from: payload)
        #expect(fast == (try JSONDecoder().decode(ResponseBodyV2DecodedPayload.self, from: Data(payload))))
        #expect(fast.notificationType == .didRenew)
        #expect(fast.data?.signedTransactionInfo?.split(separator: ".").count == 3)
    }

    // MARK: Edge cases, one by one

    @Test(arguments: [
        // Valid documents: the same values.
        #"{"a":1,"a":2}"#, #"{"n":1.0}"#, #"{"n":1e2}"#, #"{"n":1E+2}"#, #"{"n":-0}"#, #"{"n":1.5}"#,
        #"{"n":9223372036854775807}"#, #"{"n":-9223372036854775808}"#, #"{"n":9223372036854775808}"#,
        #"{"s":"\u00e9\n\t\"\\\/\b\f\r"}"#, #"{"s":"\ud83d\ude00"}"#, "{\"s\":\"é 😀\"}", #"{"s":"a\u0000b"}"#,
        #" [ 1 , "x" , null , true , false , { } , [ ] ] "#, #"{"\u0061":1}"#, "\"top\"", "3", "null", "[]",
        #"{"n":1.000000000000000000001}"#, #"{"n":12345678901234567890.0}"#, #"{"n":1e400}"#, #"{"n":-1e-400}"#,
        // Malformed documents: refused by both.
        "", "   ", "{", "}", "[1,]", "{,}", #"{"a" 1}"#, #"{"a":1 "b":2}"#, #"{"a":1,}"#, "{} x", "01", "1.", ".5",
        "-", "+1", "1e", "1e+", "tru", "nul", "falsey", #"{"s":"\x"}"#, #"{"s":"\u12"}"#, #"{"s":"\ud800"}"#,
        #"{"s":"\udc00"}"#, #"{"s":"\ud800\u0041"}"#, "{\"s\":\"a\u{01}b\"}", "{\"s\":\"tab\there\"}", #"{"s":"open}"#,
        "{'a':1}", "[1 2]", #"{"a":}"#, "NaN", "Infinity", "-Infinity", "[-]",
    ])
    func edgeCase(text: String) {
        Self.expectSame(JSONValue.self, Array(text.utf8))
    }

    /// A model's key matched as Swift compares strings: KELVIN SIGN (U+212A) is canonically equivalent to `K`, raw
    /// or escaped, and the first of two equivalent keys wins.
    @Test func keysMatchAsSwiftStringsDo() {
        struct Keyed: Codable, Equatable {
            var key: Int?
            enum CodingKeys: String, CodingKey { case key = "Key" }
        }
        for (text, value) in [
            ("{\"\u{212A}ey\":1}", 1), (#"{"\u212Aey":2}"#, 2), ("{\"Key\":3,\"\u{212A}ey\":4}", 3),
            ("{\"\u{212A}ey\":5,\"Key\":6}", 5),
        ] {
            Self.expectSame(Keyed.self, Array(text.utf8))
            #expect(Self.outcome(Keyed.self, Array(text.utf8), fast: true) == .value(Keyed(key: value)))
        }
    }

    @Test func invalidUTF8IsRefused() {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
            [0x7B, 0x22, 0xC0, 0xAF, 0x22, 0x3A, 0x31, 0x7D],
        ] {
            Self.expectSame(JSONValue.self, bytes)
            #expect(Self.outcome(JSONValue.self, bytes, fast: true) == .failed)
        }
    }

    @Test func nestingDeeperThanJSONDecoderAllowsIsRefused() {
        let allowed = Array((String(repeating: "[", count: 512) + String(repeating: "]", count: 512)).utf8)
        let tooDeep = Array((String(repeating: "[", count: 513) + String(repeating: "]", count: 513)).utf8)
        #expect(Self.outcome(JSONValue.self, allowed, fast: true) != .failed)
        #expect(Self.outcome(JSONValue.self, tooDeep, fast: true) == .failed)
        Self.expectSame(JSONValue.self, allowed)
        Self.expectSame(JSONValue.self, tooDeep)
    }

    // MARK: Typed values and errors

    /// A record with every kind of field the pipeline's records use.
    struct Sample: Codable, Equatable {
        var text: String
        var small: Int32
        var large: Int64?
        var unsigned: UInt8?
        var flag: Bool?
        var ratio: Double?
        var date: Timestamp?
        var list: [String]?
        var nested: [String: [Int]]?
        var data: Data?
        var url: URL?
        var instant: Date?
    }

    @Test(arguments: [
        #"{"text":"x","small":1}"#,
        #"{"text":"x","small":1,"large":-5,"unsigned":255,"flag":true,"ratio":0.25,"date":1698148900000,"list":["a","b"],"nested":{"k":[1,2]},"data":"AAEC","url":"https://example.com/a?b=c","instant":722000000.5}"#,
        #"{"text":"x","small":1,"date":1697679936049.7297}"#, #"{"text":"x","small":1,"large":null,"flag":null}"#,
        #"{"text":"x"}"#, #"{"small":1}"#, #"{"text":1,"small":1}"#, #"{"text":"x","small":"1"}"#,
        #"{"text":"x","small":3000000000}"#, #"{"text":"x","small":1.5}"#, #"{"text":null,"small":1}"#,
        #"{"text":"x","small":1,"unsigned":256}"#, #"{"text":"x","small":1,"unsigned":-1}"#,
        #"{"text":"x","small":1,"flag":1}"#, #"{"text":"x","small":1,"list":"a"}"#,
        #"{"text":"x","small":1,"list":[1]}"#,
        #"{"text":"x","small":1,"nested":{"k":[1,"2"]}}"#, #"{"text":"x","small":1,"data":"not base64!"}"#,
        #"{"text":"x","small":1,"date":"1698148900000"}"#, #"[{"text":"x","small":1}]"#,
    ])
    func typedDecoding(text: String) {
        Self.expectSame(Sample.self, Array(text.utf8))
    }

    @Test func errorsCarryTheCodingPath() throws {
        let json = Array(#"{"data":{"bundleId":5},"notificationType":"DID_RENEW"}"#.utf8)
        do {
            _ = try FastJSONDecoder().decode(ResponseBodyV2DecodedPayload.self, from: json)
            Issue.record("a number for bundleId decoded")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["data", "bundleId"])
        }
        do {
            _ = try FastJSONDecoder().decode([Sample].self, from: Array(#"[{"text":"x","small":1},{"small":1}]"#.utf8))
            Issue.record("a missing key decoded")
        } catch DecodingError.keyNotFound(let key, let context) {
            #expect(key.stringValue == "text")
            #expect(context.codingPath.map(\.intValue) == [1])
        }
    }

    // MARK: Mutations

    /// Deterministic byte mutations (replace, delete, insert, with JSON's own punctuation among the choices) of
    /// every fixture: both decoders must accept and refuse the same texts, and agree on what they accept.
    @Test func mutationsGiveTheSameOutcome() throws {
        var random = SeededGenerator(seed: 0x5EED_1DEA)
        // No `e` or `E`: an exponent past Double's range is JSON that no JSONValue holds, so the oracle above could
        // not tell it from malformed text (exponents are among the edge cases).
        let alphabet = Array(#"{}[]:,"\ -+.0123456789tfnu"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF]
        var accepted = 0
        var compared = 0
        for (_, json) in try Self.corpus() {
            for _ in 0..<60 {
                var bytes = json
                for _ in 0..<(1 + Int(random.next() % 3)) where !bytes.isEmpty {
                    let position = Int(random.next() % UInt64(bytes.count))
                    let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
                    switch random.next() % 3 {
                    case 0: bytes[position] = byte
                    case 1: bytes.remove(at: position)
                    default: bytes.insert(byte, at: position)
                    }
                }
                if Self.expectSame(JSONValue.self, bytes) { accepted += 1 }
                Self.expectSame(ResponseBodyV2DecodedPayload.self, bytes)
                Self.expectSame(JWSTransactionDecodedPayload.self, bytes)
                compared += 1
            }
        }
        #expect(compared > 2_000)
        #expect(accepted > compared / 10)  // many mutations keep the text JSON: values were compared, not only refusals
    }
}
