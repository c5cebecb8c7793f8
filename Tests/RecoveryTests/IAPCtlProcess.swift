import Foundation
import TestSupport

/// Runs the built `iapctl` binary, as an operator would.
enum IAPCtlProcess {
    /// Runs iapctl with arguments and extra environment; returns the exit status and everything it printed.
    /// Waits without blocking a thread: the sim it talks to runs on this process's few cooperative threads.
    static func run(_ arguments: [String], environment: [String: String]) async throws -> (Int32, String) {
        let directory = try LocalComponents.temporaryDirectory("iapctl")
        let output = directory.appendingPathComponent("out.txt")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = ServiceProcess.binaries.appendingPathComponent("iapctl")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        // One handle for both streams, so they share the file offset instead of overwriting each other.
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        try await withCheckedThrowingContinuation { (finished: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in finished.resume() }
            do { try process.run() } catch { finished.resume(throwing: error) }
        }
        return (process.terminationStatus, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }
}
