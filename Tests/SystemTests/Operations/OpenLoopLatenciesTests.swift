import TestSupport
import Testing

/// The benchmarks' latency tally: the requests over 5 ms counted by the second they were due in, so a benchmark's
/// output tells a queue (a few in every second) from a stall (many in one).
@Suite struct OpenLoopLatenciesTests {
    /// Two slow answers in second 0, none in second 1, one slow error in second 3: `2 0 0 1`; fast ones count nowhere.
    @Test func countsTheSlowRequestsBySecondDue() {
        var latencies = OpenLoopLatencies()
        latencies.record(ok: true, micros: 5_001, second: 0)
        latencies.record(ok: true, micros: 40_000, second: 0)
        latencies.record(ok: true, micros: 5_000, second: 1)
        latencies.record(ok: true, micros: 300, second: 2)
        latencies.record(ok: false, micros: 12_000, second: 3)
        #expect(latencies.slowBySecond == [2, 0, 0, 1])
        #expect(latencies.slowSeconds == "2 0 0 1")
        #expect(latencies.answered == 4 && latencies.errors == 1)
        #expect(latencies.milliseconds(100) >= 39.9)
    }
}
