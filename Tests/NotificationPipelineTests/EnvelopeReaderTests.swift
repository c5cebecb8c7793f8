import Foundation
import NotificationPipeline
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
        #"{"signedPayload":"a.b.c"} x"#, #"{"signedPayload":"a.b.c"}}"#, #"{"signedPayload""a.b.c"}"#, #"{"signedPayloadX":"a.b.c"}"#,
        #"{"signedPayload":"a.b.c"#, #"{"signedPayload"#, #"{"#,
    ])
    func refusesWhatIsNotTheEnvelope(body: String) {
        #expect(EnvelopeReader.signedPayload(in: Array(body.utf8)) == nil)
        #expect(EnvelopeReader.signedPayloadBytes(in: Array(body.utf8)) == nil)
    }
}
