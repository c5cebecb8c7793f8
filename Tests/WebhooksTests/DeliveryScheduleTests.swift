import Foundation
import Testing
import Webhooks

/// A failed delivery is tried again sooner at first, never more than an hour apart, with jitter, and for three days:
/// then the schedule says stop (the endpoint is disabled, its backlog kept).
@Suite struct DeliveryScheduleTests {
    let schedule = DeliverySchedule()
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func theDelayDoublesUpToAnHourWithJitter() {
        func delay(_ attempt: Int, _ unit: Double) -> TimeInterval {
            (self.schedule.nextAttempt(after: attempt, firstFailure: self.start, now: self.start, unit: unit)?
                .timeIntervalSince(self.start)) ?? -1
        }
        #expect(delay(1, 0.999) < 5 && delay(2, 0.999) < 10 && delay(3, 0.999) < 20)
        #expect(delay(2, 0.999) > 9.9 && delay(3, 0.999) > 19.9, "the ceiling doubles")
        #expect(delay(40, 0.999) <= 3600 && delay(40, 0.999) > 3500, "never more than an hour apart")
        #expect(delay(3, 0.5) == 10, "full jitter: anywhere up to the ceiling")
        #expect(delay(3, 0) == 1, "at least a second")
    }

    @Test func retriesStopAfterThreeDays() {
        let day: TimeInterval = 86_400
        let late = self.start.addingTimeInterval(3 * day - 60)
        let last = self.schedule.nextAttempt(after: 80, firstFailure: self.start, now: late, unit: 0.99)
        #expect(last == self.start.addingTimeInterval(3 * day), "the last try is at the horizon, not beyond")
        #expect(
            self.schedule.nextAttempt(after: 81, firstFailure: self.start, now: self.start.addingTimeInterval(3 * day))
                == nil, "three days after the first failure: disable")
    }
}
