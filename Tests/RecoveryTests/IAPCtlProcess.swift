import Foundation
import TestSupport

/// Runs the built `iapctl` binary, as an operator would.
enum IAPCtlProcess {
    /// Runs iapctl with arguments and extra environment; returns the exit status and everything it printed.
    static func run(_ arguments: [String], environment: [String: String]) throws -> (Int32, String) {
        let directory = try LocalComponents.temporaryDirectory("iapctl")
        let output = directory.appendingPathComponent("out.txt")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = ServiceProcess.binaries.appendingPathComponent("iapctl")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: output)
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }
}
