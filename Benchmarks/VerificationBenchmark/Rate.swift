import Dispatch
import Foundation

/// Operations per second, measured over a fixed wall-clock time.
enum Rate {
    /// How many operations ran in one measured stretch, and for how long.
    struct Tally {
        var count = 0
        var nanoseconds: UInt64 = 0

        /// Operations per second over everything tallied.
        var perSecond: Double { Double(self.count) / (Double(self.nanoseconds) / 1e9) }

        static func += (total: inout Tally, slice: Tally) {
            total.count += slice.count
            total.nanoseconds += slice.nanoseconds
        }
    }

    // MARK: One operation

    /// Runs `operation` on the current thread for `seconds` and returns its rate.
    static func measure(seconds: Double, _ operation: () -> Void) -> Double {
        for _ in 0..<200 { operation() }  // warm-up
        let start = DispatchTime.now().uptimeNanoseconds
        let deadline = start + UInt64(seconds * 1e9)
        var count = 0
        var now = start
        while now < deadline {
            for _ in 0..<50 { operation() }
            count += 50
            now = DispatchTime.now().uptimeNanoseconds
        }
        return Double(count) / (Double(now - start) / 1e9)
    }

    /// Runs `operation` in `tasks` concurrent loops for `seconds` and returns the combined rate.
    static func measureAsync(seconds: Double, tasks: Int, _ operation: @escaping @Sendable () async throws -> Void)
        async throws -> Double
    {
        for _ in 0..<50 { try await operation() }  // warm-up
        return try await self.slice(seconds: seconds, tasks: tasks, operation).perSecond
    }

    // MARK: Two operations, alternating

    /// Measures `baseline` and `subject` in alternating slices (`rounds` of each, `seconds` in all for each), each
    /// slice in `tasks` concurrent loops. A shared machine's speed drifts between runs minutes apart (P-256 read
    /// 11,382–13,947/s on one core on 2026-11-28); measured one after the other, that drift became the ratio's spread
    /// (0.70–0.85 of the crypto limit). Alternating, the drift falls on both alike. The order flips every round (ABBA).
    static func alternating(
        seconds: Double, rounds: Int, tasks: Int,
        baseline: @escaping @Sendable () async throws -> Void,
        subject: @escaping @Sendable () async throws -> Void
    ) async throws -> (baseline: Double, subject: Double) {
        for _ in 0..<50 {  // warm-up
            try await baseline()
            try await subject()
        }
        let sliceSeconds = seconds / Double(rounds)
        var baselineTally = Tally()
        var subjectTally = Tally()
        for round in 0..<rounds {
            if round.isMultiple(of: 2) {
                baselineTally += try await self.slice(seconds: sliceSeconds, tasks: tasks, baseline)
                subjectTally += try await self.slice(seconds: sliceSeconds, tasks: tasks, subject)
            } else {
                subjectTally += try await self.slice(seconds: sliceSeconds, tasks: tasks, subject)
                baselineTally += try await self.slice(seconds: sliceSeconds, tasks: tasks, baseline)
            }
        }
        return (baselineTally.perSecond, subjectTally.perSecond)
    }

    // MARK: Slices

    /// Runs `operation` in `tasks` concurrent loops until `seconds` have passed: how many ran, and for how long.
    private static func slice(seconds: Double, tasks: Int, _ operation: @escaping @Sendable () async throws -> Void)
        async throws -> Tally
    {
        let start = DispatchTime.now().uptimeNanoseconds
        let deadline = start + UInt64(seconds * 1e9)
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    var count = 0
                    while DispatchTime.now().uptimeNanoseconds < deadline {
                        for _ in 0..<20 { try await operation() }
                        count += 20
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        return Tally(count: total, nanoseconds: DispatchTime.now().uptimeNanoseconds - start)
    }
}
