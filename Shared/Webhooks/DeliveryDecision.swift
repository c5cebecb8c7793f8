public import Foundation

/// What one attempt of a delivery comes to, decided from what the endpoint answered: a plain value, so the rules are
/// tested without a server. A 2xx delivers; `410 Gone` disables the endpoint at once; anything else (another status,
/// no answer, a timeout, an address refused) is tried again on the ``DeliverySchedule``, until the schedule's horizon
/// has passed since the delivery first failed, which disables the endpoint. A disabled endpoint keeps its backlog.
public enum DeliveryDecision: Sendable, Equatable {
    case delivered
    case retry(at: Date)
    case disableEndpoint(reason: String)

    /// The decision after an attempt that answered `status` (nil: no answer) at `now`, the delivery having been tried
    /// `previousAttempts` times before and having first failed at `firstFailure` (nil: never). `unit` in 0..<1 is
    /// the jitter.
    public static func after(
        status: Int?, previousAttempts: Int, firstFailure: Date?, now: Date, schedule: DeliverySchedule, unit: Double
    ) -> DeliveryDecision {
        if let status, (200..<300).contains(status) { return .delivered }
        if status == 410 { return .disableEndpoint(reason: "the endpoint answered 410 Gone") }
        let failingSince = firstFailure ?? now
        guard
            let next = schedule.nextAttempt(
                after: previousAttempts + 1, firstFailure: failingSince, now: now, unit: unit)
        else {
            return .disableEndpoint(
                reason: "deliveries failed for \(Int(schedule.horizon)) s (since \(failingSince.ISO8601Format()))")
        }
        return .retry(at: next)
    }
}

/// The start of a response body kept in the delivery log: at most `limit` bytes, cut at a character boundary.
public func responseSnippet(_ body: [UInt8], limit: Int = 256) -> String {
    var text = String(decoding: body.prefix(limit), as: UTF8.self)
    if body.count > limit { text += "…" }
    return text
}
