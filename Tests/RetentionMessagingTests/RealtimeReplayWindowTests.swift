import Foundation
import Testing

@testable import RetentionMessaging

/// The replay window decides without a server: current requests are new once and repeated after, with their first
/// answer; old or future-dated ones are stale; keys leave after the window or beyond the capacity.
@Suite struct RealtimeReplayWindowTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aRequestIsNewOnceThenRepeatedWithItsFirstAnswer() {
        let window = RealtimeReplayWindow(window: 300, skew: 60, capacity: 10)
        #expect(window.check(key: "a", signedAt: self.now, now: self.now) == .new)
        #expect(window.check(key: "a", signedAt: self.now, now: self.now) == .repeated(answer: nil), "still answering")
        window.record("a", answer: Data("first".utf8))
        #expect(
            window.check(key: "a", signedAt: self.now, now: self.now.addingTimeInterval(10))
                == .repeated(answer: Data("first".utf8)))
        #expect(window.check(key: "b", signedAt: self.now, now: self.now) == .new, "another request is its own")
        #expect(window.check(key: nil, signedAt: self.now, now: self.now) == .new, "no identifier: only its age")
        #expect(window.check(key: nil, signedAt: self.now, now: self.now) == .new)
    }

    @Test func oldAndFutureRequestsAreStale() {
        let window = RealtimeReplayWindow(window: 300, skew: 60, capacity: 10)
        #expect(
            window.check(key: "a", signedAt: self.now.addingTimeInterval(-301), now: self.now)
                == .stale(ageSeconds: 301))
        #expect(
            window.check(key: "b", signedAt: self.now.addingTimeInterval(61), now: self.now) == .stale(ageSeconds: -61))
        #expect(window.check(key: "c", signedAt: nil, now: self.now) == .stale(ageSeconds: Int.max))
        #expect(window.check(key: "d", signedAt: self.now.addingTimeInterval(-299), now: self.now) == .new)
    }

    @Test func keysLeaveAfterTheWindowOrBeyondTheCapacity() {
        let window = RealtimeReplayWindow(window: 300, skew: 60, capacity: 2)
        for key in ["a", "b", "c"] {
            #expect(window.check(key: key, signedAt: self.now, now: self.now) == .new)
            window.record(key, answer: Data(key.utf8))
        }
        // The capacity evicts the oldest on the next check.
        #expect(window.check(key: "b", signedAt: self.now, now: self.now) == .repeated(answer: Data("b".utf8)))
        #expect(window.check(key: "a", signedAt: self.now, now: self.now) == .new, "the oldest went beyond capacity")
        let later = self.now.addingTimeInterval(301)
        #expect(
            window.check(key: "c", signedAt: later.addingTimeInterval(-10), now: later) == .new,
            "a key first seen before the window is gone (its request is stale by then anyway)")
    }

    @Test func aKeyAnotherReplicaAnswersIsForgottenButAnAnswerIsNot() {
        let window = RealtimeReplayWindow(window: 300, skew: 60, capacity: 10)
        #expect(window.check(key: "a", signedAt: self.now, now: self.now) == .new)
        #expect(window.check(key: "a", signedAt: self.now, now: self.now) == .repeated(answer: nil), "reserved")
        window.forget("a")
        #expect(window.check(key: "a", signedAt: self.now, now: self.now) == .new, "forgotten: asked again")
        window.record("a", answer: Data("first".utf8))
        window.forget("a")
        #expect(
            window.check(key: "a", signedAt: self.now, now: self.now) == .repeated(answer: Data("first".utf8)),
            "an answer is never forgotten within the window")
    }
}
