import Entitlements
import Foundation
import Testing

@testable import AppStoreModels

/// The updater writes its events' canonical JSON with `FastJSONEncoder`: for every event the rules emit (every type,
/// late ones, moves, migrations, refunded items) the bytes are `JSONEncoder`'s canonical ones, written by the fast
/// encoder itself, so the published events, their ids' inputs and the sim comparisons are unchanged.
@Suite struct EventEncodingTests {
    @Test func everyEmittedEventEncodesToTheCanonicalBytes() throws {
        let events = try EventSchemaTests.allEmittedEvents()
        let foundation = AppStoreJSON.makeCanonicalEncoder()
        #expect(Set(events.map(\.eventType)).count >= 10, "many event types")
        for event in events {
            let fast = try FastJSONEncoder.canonical.writtenBytes(event)
            #expect(fast != nil, "written by the fast encoder itself: \(event.eventType)")
            #expect(
                fast == Array(try foundation.encode(event)),
                "\(event.eventType): \(String(decoding: fast ?? [], as: UTF8.self))")
        }
    }
}
