import Foundation
import Synchronization

/// Apple's real-time requests are answered once each, and only while they are current: a request signed more than
/// `window` before now (or more than `skew` after it) is stale, and a request identifier seen within the window gets
/// the answer it got the first time, with no second `retention.offered` event and no new offer signature.
///
/// This is the replica's own memory, asked first; the replicas share theirs through PostgreSQL (``RealtimeAnswers``),
/// which the route asks for a request this window calls new. When PostgreSQL cannot answer, this window alone decides.
/// At most `capacity` answers are kept (the oldest go first); at Apple's rates that is far more than a window holds.
final class RealtimeReplayWindow: Sendable {
    /// What to do with a verified request.
    enum Verdict: Equatable {
        /// Signed too long ago, or ahead of this clock by more than the skew (seconds, negative: ahead).
        case stale(ageSeconds: Int)
        /// Seen within the window: its first answer, or nil while that answer is still being made.
        case repeated(answer: Data?)
        /// New: answer it, then ``record(_:answer:)``.
        case new
    }

    let window: TimeInterval
    let skew: TimeInterval
    let capacity: Int
    /// Answers by request key, and the keys in the order they were first seen (with when).
    private let state = Mutex<State>(State())

    struct State {
        var answers: [String: Data?] = [:]
        var order: [(key: String, seen: Date)] = []
        var head = 0
    }

    init(window: TimeInterval = 300, skew: TimeInterval = 60, capacity: Int = 200_000) {
        self.window = window
        self.skew = skew
        self.capacity = capacity
    }

    /// Decides about a request signed at `signedAt` with key `key` (nil: the request names no identifier, so only its
    /// age is checked), and reserves a new key so a concurrent repeat is not answered twice.
    func check(key: String?, signedAt: Date?, now: Date) -> Verdict {
        let age = now.timeIntervalSince(signedAt ?? .distantPast)
        guard age <= self.window, age >= -self.skew else {
            return .stale(ageSeconds: signedAt == nil ? Int.max : Int(age.rounded()))
        }
        guard let key else { return .new }
        return self.state.withLock { state in
            self.evict(&state, now: now)
            if let answer = state.answers[key] { return .repeated(answer: answer) }
            state.answers[key] = .some(nil)
            state.order.append((key, now))
            return .new
        }
    }

    /// Keeps the answer given to a new request, for its repeats.
    func record(_ key: String?, answer: Data) {
        guard let key else { return }
        self.state.withLock { state in
            if state.answers[key] != nil { state.answers[key] = .some(answer) }
        }
    }

    /// Lets go of a key reserved by ``check(key:signedAt:now:)`` whose answer another replica is making, so a later
    /// repeat asks the shared store again instead of being told "in flight" here for the whole window.
    func forget(_ key: String?) {
        guard let key else { return }
        self.state.withLock { state in
            if case .some(nil) = state.answers[key] { state.answers[key] = nil }
        }
    }

    /// Drops keys first seen before the window, and the oldest beyond the capacity.
    private func evict(_ state: inout State, now: Date) {
        while state.head < state.order.count {
            let oldest = state.order[state.head]
            guard now.timeIntervalSince(oldest.seen) > self.window || state.answers.count > self.capacity else { break }
            state.answers[oldest.key] = nil
            state.head += 1
        }
        if state.head > 1024 && state.head * 2 > state.order.count {
            state.order.removeFirst(state.head)
            state.head = 0
        }
    }
}
