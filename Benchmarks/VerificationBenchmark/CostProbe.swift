import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Full verification's CPU cost, measured while a stage runs on the same CPUs (`--cost-probe S`). A shared machine's
/// speed drifts by a fifth from one few-second stretch to the next (2026-11-29: one core verified 2,467–4,057
/// notifications a second in eight runs of two seconds in a row, the machine otherwise idle), so a baseline measured
/// before the stage compares two different machines. Run beside the stage, both share the same moments, and the
/// ratio of their CPU per notification is the ratio of their rates on the same cores.
enum CostProbe {
    /// Runs `operation` in one loop for `seconds` (after a warm-up) and prints
    /// `cost-probe <operations> <CPU seconds of this process> <wall seconds>`.
    static func run(seconds: Double, _ operation: @Sendable () async throws -> Void) async throws {
        for _ in 0..<50 { try await operation() }  // warm-up
        let cpuStart = Self.processCPUSeconds()
        let start = DispatchTime.now().uptimeNanoseconds
        let deadline = start + UInt64(seconds * 1e9)
        var count = 0
        var now = start
        while now < deadline {
            for _ in 0..<10 { try await operation() }
            count += 10
            now = DispatchTime.now().uptimeNanoseconds
        }
        let cpu = Self.processCPUSeconds() - cpuStart
        print(String(format: "cost-probe %d %.4f %.3f", count, cpu, Double(now - start) / 1e9))
    }

    /// The CPU time this process has used (user and system, every thread), in seconds.
    static func processCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
