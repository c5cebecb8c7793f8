import AppStoreModels
import Foundation
import Hummingbird
import ServiceRuntime
import Testing

@testable import Ingest

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

    /// The accepted answer is written without a dictionary; it must be the general answer byte for byte,
    /// whatever the (still unverified) notificationUUID holds.
    @Test(arguments: ["6b2a6f1e-3c1d-4e55-9f0a-1b2c3d4e5f60", "", #"q"b\s"#, "ctl\u{1}\n", "é 🍎"])
    func theAcceptedAnswerIsTheGeneralAnswer(_ uuid: String) async throws {
        let fast = NotificationController.accepted(notificationUUID: uuid)
        let general = NotificationController.json(status: 200, ["status": "accepted", "notificationUUID": uuid])
        #expect(fast.status == general.status)
        #expect(fast.headers == general.headers)
        #expect(try await Self.text(of: fast) == Self.text(of: general))
    }

    @Test func keysAreSortedAndControlCharactersEscaped() {
        #expect(
            JSONText.object(["status": "accepted", "notificationUUID": "u"])
                == #"{"notificationUUID":"u","status":"accepted"}"#)
        #expect(JSONText.object(["m": "a\u{1}b\nc"]) == #"{"m":"a\u0001b\nc"}"#)
        #expect(JSONText.quoted("plain-id é") == #""plain-id é""#)
        #expect(JSONText.quoted(#"a"b\c"#) == #""a\"b\\c""#)
        #expect(JSONText.quoted("\u{1F}\u{7F}") == #""\u001f\#u{7F}""#)
    }

    /// A response body's text.
    private static func text(of response: Response) async throws -> String {
        let writer = CollectingWriter()
        try await response.body.write(writer)
        return String(buffer: writer.collected)
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

/// A response body writer that keeps what is written (in a box its copies share).
private struct CollectingWriter: ResponseBodyWriter {
    final class Box: @unchecked Sendable {
        var collected = ByteBuffer()
    }

    let box = Box()

    var collected: ByteBuffer { self.box.collected }

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        self.box.collected.writeBuffer(&buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
