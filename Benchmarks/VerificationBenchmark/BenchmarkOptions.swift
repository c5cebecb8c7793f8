import Foundation

/// Command-line options of the benchmark.
struct BenchmarkOptions {
    /// How long each figure is measured.
    var seconds: Double = 3
    /// The signed notification to verify; the real Apple-signed one by default.
    var notification: URL = BenchmarkOptions.repositoryRoot
        .appendingPathComponent("Tests/Fixtures/real-sandbox/signedPayload_DID_RENEW")
    /// A root certificate to trust instead of Apple Root CA G3.
    var root: URL?
    /// How many cores the all-core figures use: the machine's by default. A run confined to fewer CPUs (`taskset`)
    /// names their count, since Foundation counts the machine's, not the process's.
    var cores = ProcessInfo.processInfo.activeProcessorCount
    /// `--cost-probe S`: only full verification (chain cache warm) in one loop for S seconds, printing its CPU cost
    /// (``CostProbe``), to run beside a stage on the same CPUs so that both are measured at the same moments.
    var costProbeSeconds: Double?

    /// The repository, found from this source file.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Parses `--seconds S`, `--notification FILE`, `--root FILE`, `--cores N` and `--cost-probe S`.
    init(arguments: [String]) throws {
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            guard let value = remaining.popFirst() else { throw BenchmarkUsageError(flag: flag) }
            switch flag {
            case "--seconds":
                guard let seconds = Double(value), seconds > 0 else { throw BenchmarkUsageError(flag: flag) }
                self.seconds = seconds
            case "--notification": self.notification = URL(fileURLWithPath: value)
            case "--root": self.root = URL(fileURLWithPath: value)
            case "--cores":
                guard let cores = Int(value), cores > 0 else { throw BenchmarkUsageError(flag: flag) }
                self.cores = cores
            case "--cost-probe":
                guard let seconds = Double(value), seconds > 0 else { throw BenchmarkUsageError(flag: flag) }
                self.costProbeSeconds = seconds
            default: throw BenchmarkUsageError(flag: flag)
            }
        }
    }
}

/// An unknown flag or a flag without its value.
struct BenchmarkUsageError: Error, CustomStringConvertible {
    let flag: String
    var description: String {
        "usage: verification-benchmark [--seconds S] [--notification FILE] [--root FILE] [--cores N] [--cost-probe S] (at \(flag))"
    }
}
