public import Foundation

/// Runs the project's service binaries in tests, as separate processes that can be killed.
public enum ServiceProcess {
    /// The directory of the test bundle, where `swift build` puts every executable.
    public static let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()

    /// Starts a built executable with extra environment variables (and `arguments`); its output is appended to
    /// `log`.
    public static func start(_ name: String, _ arguments: [String] = [], environment: [String: String], log: URL)
        throws -> Process
    {
        let process = Process()
        process.executableURL = binaries.appendingPathComponent(name)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        if !FileManager.default.fileExists(atPath: log.path) {
            FileManager.default.createFile(atPath: log.path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    /// Waits until `process` has exited, by polling (never blocking a thread of the cooperative pool), and
    /// returns its status.
    public static func exitStatus(of process: Process) async throws -> Int32 {
        while process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        return process.terminationStatus
    }

    /// Stops `process` with SIGTERM and waits for it to exit, by polling: never `waitUntilExit()`, which holds a
    /// thread of the cooperative pool for as long as the shutdown takes (with two cores the pool has two threads, and
    /// the sim of a test running beside it timed its answers 10 s late). SIGKILL when it is still running after
    /// `looks` looks `interval` apart (a count, not a deadline: a starved test process looks less often, never fewer
    /// times). Returns the exit status, or nil when it had to be killed.
    @discardableResult
    public static func stop(_ process: Process, looks: Int = 400, interval: Duration = .milliseconds(50)) async
        -> Int32?
    {
        if process.isRunning { process.terminate() }
        for _ in 0..<looks where process.isRunning { try? await Task.sleep(for: interval) }
        guard process.isRunning else { return process.terminationStatus }
        await Self.kill(process)
        return nil
    }

    /// SIGKILLs `process` (no shutdown of any kind) and waits until it is gone.
    public static func kill(_ process: Process) async {
        Foundation.kill(process.processIdentifier, SIGKILL)
        _ = try? await Self.exitStatus(of: process)
    }

    /// Runs `body` while `process` runs, then stops it (``stop(_:looks:interval:)``) whether the body returned or threw.
    public static func whileRunning<T>(_ process: Process, _ body: () async throws -> T) async throws -> T {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        await Self.stop(process)
        return try outcome.get()
    }
}

/// A small deterministic random generator (SplitMix64), so a failing shuffle or mutation can be replayed.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { self.state = seed &* 0x9E37_79B9_7F4A_7C15 }

    public mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
