import Foundation
public import Histogram

/// What one target answered under an open-loop load (the benchmarks' request i is due at start + i / rate and its
/// latency counts from then): answers, errors, the elapsed time and the latencies in microseconds.
public struct OpenLoopLatencies: Sendable {
    public var answered = 0
    public var errors = 0
    public var elapsed = 0.0
    public var micros = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
    /// Requests slower than ``slowMicros``, by the second of the load they were due in: a queue spreads them over
    /// every second, a stall puts them in one or two.
    public var slowBySecond: [Int] = []
    /// What ``slowBySecond`` counts as slow (5 ms, the retention goal's bound).
    public static let slowMicros: UInt64 = 5_000

    public init() {}

    /// A latency percentile in milliseconds.
    public func milliseconds(_ percentile: Double) -> Double {
        Double(self.micros.valueAtPercentile(percentile)) / 1000
    }

    /// One row of a benchmark's table: answered per second, errors, p50, p90, p99, max.
    public func line(_ name: String) -> String {
        name.padding(toLength: 44, withPad: " ", startingAt: 0)
            + String(
                format: "%11.0f %8d %9.2f %9.2f %9.2f %9.2f", Double(self.answered) / max(self.elapsed, 0.001),
                self.errors, self.milliseconds(50), self.milliseconds(90), self.milliseconds(99),
                self.milliseconds(100))
    }

    /// Checks a baseline before it becomes a figure: a bare endpoint that failed requests or answered fewer than
    /// nine in ten of those offered measured its failures, not the machine's limit.
    public func checkedAsBaseline(_ name: String, offered: Int) throws -> Self {
        guard self.errors == 0, self.answered * 10 >= offered * 9 else {
            throw ImplausibleBaselineError(
                "\(name): \(self.answered) answered and \(self.errors) failed of \(offered) offered")
        }
        return self
    }

    /// The requests slower than 5 ms by second of the load, e.g. `0 0 3 0 41 2 0 0 0 0`.
    public var slowSeconds: String {
        self.slowBySecond.map(String.init).joined(separator: " ")
    }

    /// Counts one answer, due `second` seconds into the load.
    public mutating func record(ok: Bool, micros: UInt64, second: Int = 0) {
        if ok { self.answered += 1 } else { self.errors += 1 }
        self.micros.record(micros)
        if self.slowBySecond.count <= second {
            self.slowBySecond.append(contentsOf: repeatElement(0, count: second + 1 - self.slowBySecond.count))
        }
        if micros > Self.slowMicros { self.slowBySecond[second] += 1 }
    }
}

/// A baseline that cannot be what it claims: the benchmark stops with it instead of printing a ratio against it.
public struct ImplausibleBaselineError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = "implausible baseline: " + description }
}
