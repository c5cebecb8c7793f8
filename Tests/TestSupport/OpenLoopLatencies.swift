import Foundation
public import Histogram

/// What one target answered under an open-loop load (the benchmarks' request i is due at start + i / rate and its
/// latency counts from then): answers, errors, the elapsed time and the latencies in microseconds.
public struct OpenLoopLatencies: Sendable {
    public var answered = 0
    public var errors = 0
    public var elapsed = 0.0
    public var micros = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)

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

    /// Counts one answer.
    public mutating func record(ok: Bool, micros: UInt64) {
        if ok { self.answered += 1 } else { self.errors += 1 }
        self.micros.record(micros)
    }
}

/// A baseline that cannot be what it claims: the benchmark stops with it instead of printing a ratio against it.
public struct ImplausibleBaselineError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = "implausible baseline: " + description }
}
