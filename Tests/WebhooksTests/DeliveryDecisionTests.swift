import Foundation
import Testing
import Webhooks

/// What an attempt comes to: a 2xx delivers, 410 disables at once, anything else retries on the schedule until its
/// horizon has passed since the first failure, which disables the endpoint.
@Suite struct DeliveryDecisionTests {
    let schedule = DeliverySchedule()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func decide(_ status: Int?, attempts: Int = 0, failingFor: TimeInterval? = nil) -> DeliveryDecision {
        DeliveryDecision.after(
            status: status, previousAttempts: attempts, firstFailure: failingFor.map { self.now - $0 }, now: self.now,
            schedule: self.schedule, unit: 0.5)
    }

    @Test func everyTwoHundredDeliversAndNothingElseDoes() {
        for status in [200, 201, 202, 204, 299] { #expect(self.decide(status) == .delivered) }
        for status in [nil, 100, 301, 302, 400, 401, 404, 429, 500, 503] {
            guard case .retry = self.decide(status) else {
                Issue.record("\(String(describing: status)) should be retried")
                continue
            }
        }
    }

    @Test func goneDisablesAtOnce() {
        guard case .disableEndpoint(let reason) = self.decide(410) else { return #expect(Bool(false)) }
        #expect(reason.contains("410"))
    }

    @Test func retriesFollowTheScheduleFromTheFirstFailure() {
        #expect(self.decide(500) == .retry(at: self.now + 2.5), "first failure: half of the 5 s ceiling")
        #expect(self.decide(500, attempts: 2, failingFor: 60) == .retry(at: self.now + 10), "third: half of 20 s")
    }

    @Test func threeDaysOfFailureDisable() {
        guard case .disableEndpoint(let reason) = self.decide(503, attempts: 70, failingFor: 3 * 86_400) else {
            return #expect(Bool(false))
        }
        #expect(reason.contains("259200"))
        guard case .retry = self.decide(503, attempts: 70, failingFor: 3 * 86_400 - 120) else {
            return #expect(Bool(false), "just inside the horizon it is still retried")
        }
    }

    @Test func aShortScheduleRetriesWithinASecond() {
        var quick = DeliverySchedule()
        quick.base = 0.1
        let next = quick.nextAttempt(after: 1, firstFailure: self.now, now: self.now, unit: 0)
        #expect(next == self.now + 0.1, "the floor is the base when the base is under a second")
    }

    @Test func snippetsAreCut() {
        #expect(responseSnippet(Array("ok".utf8)) == "ok")
        #expect(responseSnippet(Array(repeating: 65, count: 300), limit: 4) == "AAAA…")
    }
}
