import Foundation
import TestSupport

/// Runs the built `iapctl` binary, as an operator would.
public enum IAPCtlProcess {
    /// Runs iapctl with arguments and extra environment; returns the exit status and everything it printed.
    /// Waits without blocking a thread: the sim it talks to runs on this process's few cooperative threads.
    public static func run(_ arguments: [String], environment: [String: String]) async throws -> (Int32, String) {
        let result = try await Program.run(
            ServiceProcess.binaries.appendingPathComponent("iapctl"), arguments, environment: environment,
            errors: .merged)
        return (result.status, result.output)
    }
}
