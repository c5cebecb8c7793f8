import Testing

@testable import NotificationPipeline
@testable import PipelineRecords

/// Replacing the nested JWS strings of Apple's payload JSON by `null`, and nothing else.
@Suite struct SignedStringRemovalTests {
    static func replaced(_ json: String, _ pairs: [(key: String, value: String)]) -> String? {
        SignedStringRemoval.replacingWithNull(pairs, in: Array(json.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func replacesEachNamedValue() {
        #expect(
            Self.replaced(
                #"{"data":{"a":1,"signedTransactionInfo":"t.t.t","signedRenewalInfo" : "r.r.r"}}"#,
                [("signedTransactionInfo", "t.t.t"), ("signedRenewalInfo", "r.r.r")])
                == #"{"data":{"a":1,"signedTransactionInfo":null,"signedRenewalInfo" : null}}"#)
        #expect(Self.replaced(#"{"a":"x"}"#, []) == #"{"a":"x"}"#)
        #expect(Self.replaced(#"{"k":"v","k":"v"}"#, [("k", "v")]) == #"{"k":null,"k":null}"#, "a repeated key: both")
    }

    @Test func leavesTextInsideOtherStringsAlone() {
        // The key and value appear inside another string, after escaped quotes and an escaped backslash.
        let json = #"{"note":"\"signedTransactionInfo\":\"t.t.t\"","path":"c:\\","signedTransactionInfo":"t.t.t"}"#
        #expect(
            Self.replaced(json, [("signedTransactionInfo", "t.t.t")])
                == #"{"note":"\"signedTransactionInfo\":\"t.t.t\"","path":"c:\\","signedTransactionInfo":null}"#)
        // A value that equals a key name is not a key.
        #expect(
            Self.replaced(#"{"a":"signedTransactionInfo","b":"t.t.t"}"#, [("signedTransactionInfo", "t.t.t")]) == nil)
    }

    @Test func refusesWhenAValueIsNotThere() {
        #expect(Self.replaced(#"{"signedTransactionInfo":"other"}"#, [("signedTransactionInfo", "t.t.t")]) == nil)
        #expect(Self.replaced(#"{"signedTransactionInfo":null}"#, [("signedTransactionInfo", "t.t.t")]) == nil)
        #expect(
            Self.replaced(#"{"signedTransactionInfo":"t.t\u002Et"}"#, [("signedTransactionInfo", "t.t.t")]) == nil,
            "escaped: not the bytes")
        #expect(
            Self.replaced(#"{"signedTransactionInfo":"t.t.t"#, [("signedTransactionInfo", "t.t.t")]) == nil,
            "unterminated")
        #expect(Self.replaced(#"{"a":"t.t.t"}"#, [("signedTransactionInfo", "t.t.t"), ("a", "t.t.t")]) == nil)
    }
}
