public import Foundation

/// When a failed delivery is tried again: exponential back-off with full jitter (5 s doubling, at most an hour apart),
/// for three days from its first failure, Apple's own retry horizon for notifications. After that the endpoint is
/// disabled and its backlog kept. A plain value, so the schedule is tested without a clock or a server.
public struct DeliverySchedule: Sendable, Hashable {
    public var base: TimeInterval = 5
    public var maximumDelay: TimeInterval = 3600
    /// How long a delivery is retried after its first failure.
    public var horizon: TimeInterval = 3 * 86_400

    public init() {}

    /// When to try again after failed attempt number `attempt` (1 for the first), the first failure having been at
    /// `firstFailure`; nil when the horizon is passed (disable the endpoint). `unit` is a random number in 0..<1.
    public func nextAttempt(after attempt: Int, firstFailure: Date, now: Date, unit: Double) -> Date? {
        guard now.timeIntervalSince(firstFailure) < self.horizon else { return nil }
        let ceiling = min(self.maximumDelay, self.base * pow(2, Double(min(max(attempt, 1) - 1, 30))))
        let delay = max(min(1, self.base), ceiling * min(max(unit, 0), 1))
        let next = now.addingTimeInterval(delay)
        return next.timeIntervalSince(firstFailure) <= self.horizon
            ? next : firstFailure.addingTimeInterval(self.horizon)
    }

    /// The next attempt with the system's random generator.
    public func nextAttempt(after attempt: Int, firstFailure: Date, now: Date = Date()) -> Date? {
        self.nextAttempt(after: attempt, firstFailure: firstFailure, now: now, unit: Double.random(in: 0..<1))
    }
}
