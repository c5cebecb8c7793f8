import Storage
import Testing

/// The feed's cursor round-trips through its text form, and anything else a client sends as `after` is refused.
@Suite struct EventFeedCursorTests {
    @Test func aCursorReadsBackAndNothingElseIsOne() {
        let cursor = EventFeed.Cursor(writer: 123_456_789, id: 42)
        #expect(cursor.description == "v1.123456789.42")
        #expect(EventFeed.Cursor(cursor.description) == cursor)
        #expect(EventFeed.Cursor("v1.0.0") == .start)
        for text in [
            "", "v1", "v1.1", "v2.1.2", "v1.-1.2", "v1.1.-2", "v1.1.2.3", "v1.a.2", "v1.99999999999999999999.1",
        ] {
            #expect(EventFeed.Cursor(text) == nil, "\(text)")
        }
    }
}
