import Foundation
@testable import Ingest
import ServiceRuntime
import Testing

/// Ingest's answers are written without `JSONSerialization`; whatever a message holds (a notificationUUID is
/// the client's text until verified), the answer must parse back to exactly the same strings.
@Suite struct JSONAnswerTests {
    @Test(arguments: [
        ["status": "accepted", "notificationUUID": "6b2a6f1e-3c1d-4e55-9f0a-1b2c3d4e5f60"],
        ["error": "bad-payload", "message": #"quote " backslash \ slash / newline \#n tab \#t"#],
        ["message": "nul \u{0} bell \u{7} unit separator \u{1F} delete \u{7F}", "b": "", "a": "é 🍎 \u{2028}"],
        [:],
    ])
    func answersParseBackToTheSameStrings(_ object: [String: String]) throws {
        let text = JSONText.object(object)
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String]
        #expect(parsed == object)
    }

    @Test func keysAreSortedAndControlCharactersEscaped() {
        #expect(JSONText.object(["status": "accepted", "notificationUUID": "u"]) == #"{"notificationUUID":"u","status":"accepted"}"#)
        #expect(JSONText.object(["m": "a\u{1}b\nc"]) == #"{"m":"a\u0001b\nc"}"#)
    }
}

/// Request identifiers made for requests without `x-request-id` are random version-4 UUIDs.
@Suite struct RequestIdentifierTests {
    @Test func identifiersAreDistinctVersion4UUIDs() throws {
        let identifiers = (0..<1000).map { _ in RequestIdentifier.random() }
        #expect(Set(identifiers).count == 1000)
        for identifier in identifiers.prefix(50) {
            let uuid = try #require(UUID(uuidString: identifier)).uuid
            #expect(uuid.6 >> 4 == 4 && uuid.8 >> 6 == 0b10, "\(identifier)")
        }
    }
}
