import Foundation
import NotificationPipeline
import PipelineRecords
import Testing

/// The envelope fast path agrees with a JSON decoder on every form of Apple's body.
@Suite struct EnvelopeReaderTests {
    @Test(arguments: [
        (#"{"signedPayload":"aGVhZA.cGF5bG9hZA.c2ln"}"#, "aGVhZA.cGF5bG9hZA.c2ln"),
        (#"{ "signedPayload" : "a.b.c" }"#, "a.b.c"),
        (#"{"signedPayload":"a\/b.c.d"}"#, "a/b.c.d"),
        (#"{"other":1,"signedPayload":"x.y.z"}"#, "x.y.z"),
        (#"{"signedPayload":""}"#, ""),
        ("\r\n\t{\n  \"signedPayload\":\t\"h.p.s\"\n}\n", "h.p.s"),
        (#"{"signedPayload": "h.p.s" , "b": 2}"#, "h.p.s"),
        (#"{"signedPayload":"h+p.s"}"#, "h+p.s"),
    ])
    func readsTheSignedPayload(body: String, expected: String) {
        #expect(EnvelopeReader.signedPayload(in: Array(body.utf8)) == expected)
        #expect(EnvelopeReader.signedPayloadBytes(in: Array(body.utf8)).map { Array($0) } == Array(expected.utf8))
    }

    @Test(arguments: [
        #"{"signedPayload":12}"#, "not json", #"{"other":"x"}"#, #"{"signedPayload":"a.b"#, "",
        #"{"signedPayload":"a.b.c"} x"#, #"{"signedPayload":"a.b.c"}}"#, #"{"signedPayload""a.b.c"}"#,
        #"{"signedPayloadX":"a.b.c"}"#,
        #"{"signedPayload":"a.b.c"#, #"{"signedPayload"#, #"{"#,
    ])
    func refusesWhatIsNotTheEnvelope(body: String) {
        #expect(EnvelopeReader.signedPayload(in: Array(body.utf8)) == nil)
        #expect(EnvelopeReader.signedPayloadBytes(in: Array(body.utf8)) == nil)
    }

    /// What a JSON decoder reads as `signedPayload`, the reference the reader must agree with.
    static func decoded(_ body: [UInt8]) -> String? {
        struct Envelope: Decodable { let signedPayload: String }
        return (try? JSONDecoder().decode(Envelope.self, from: Data(body)))?.signedPayload
    }

    @Test func agreesWithADecoderWhateverByteSitsAnywhereInALongString() {
        // Every byte value at positions around the 8-byte words the scan reads, in a 40-byte string.
        for position in [0, 1, 7, 8, 9, 15, 16, 31, 32, 38, 39] {
            for byte in UInt8(0)...UInt8(255) {
                var text = Array(repeating: UInt8(ascii: "A"), count: 40)
                text[position] = byte
                let body = Array(#"{"signedPayload":""#.utf8) + text + Array(#""}"#.utf8)
                let expected = Self.decoded(body)
                #expect(EnvelopeReader.signedPayload(in: body) == expected, "byte \(byte) at \(position)")
                #expect(
                    EnvelopeReader.signedPayloadBytes(in: body).map { Array($0) } == expected.map { Array($0.utf8) },
                    "byte \(byte) at \(position)")
            }
        }
    }

    @Test func readsEscapesAndTextBeyondBase64AsADecoderDoes() throws {
        let jws = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../Fixtures/real-sandbox/signedPayload_DID_RENEW"), encoding: .utf8
        )
        .trimmingCharacters(in: .whitespacesAndNewlines)
        for text in [jws, jws + " {x} ", "é" + jws, jws + "\\u0041", String(jws.prefix(9)) + "\\\"" + jws] {
            let body = Array(#"{"signedPayload":""#.utf8) + Array(text.utf8) + Array(#""}"#.utf8)
            let expected = try #require(Self.decoded(body))
            #expect(EnvelopeReader.signedPayload(in: body) == expected)
        }
    }
}
