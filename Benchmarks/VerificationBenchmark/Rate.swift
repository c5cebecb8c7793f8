import Dispatch
import Foundation

/// Operations per second, measured over a fixed wall-clock time.
enum Rate {
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
        return Double(total) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
}
