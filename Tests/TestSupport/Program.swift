public import Foundation

/// What a finished program left behind.
public struct ProgramResult: Sendable {
    /// Its exit status (or the signal's number when `exited` is false).
    public var status: Int32
    /// Whether it exited rather than being killed by a signal.
    public var exited: Bool
    /// Its standard output (with its standard error too, when they were merged).
    public var output: String
    /// Its standard error, unless merged into `output` or discarded.
    public var errors: String
}

/// The one way tests run a program: to its end, without holding a thread while it runs.
///
/// The wait is a termination handler resuming a continuation, never `waitUntilExit()` on the cooperative pool:
/// with two cores that pool has two threads, and one blocked in a wait left the services of the same test
/// process (the sim, HTTP clients) one thread, which is how waits of 14.5 s came about. Output goes to files,
/// not pipes: a server the program starts in the background inherits the descriptors, and a pipe would then
/// never reach end-of-file; standard input, when given, is read from a file too.
public enum Program {
    /// How standard error is kept.
    public enum ErrorStream: Sendable {
        /// In `errors`.
        case separate
        /// Interleaved into `output` (one file offset shared by both streams).
        case merged
        /// Thrown away.
        case discarded
    }

    /// Runs `executable` with `arguments` (the environment is this process's plus `environment`) to its end, in
    /// `workingDirectory` when given (for tools that leave files where they run).
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], input: [UInt8]? = nil,
        errors: ErrorStream = .separate, workingDirectory: URL? = nil
    ) async throws -> ProgramResult {
        let directory = try LocalComponents.temporaryDirectory("program")
        defer { try? FileManager.default.removeItem(at: directory) }
        let outputURL = directory.appending(path: "stdout"), errorURL = directory.appending(path: "stderr")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let workingDirectory { process.currentDirectoryURL = workingDirectory }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        let output = try FileHandle(forWritingTo: outputURL)
        defer { try? output.close() }
        process.standardOutput = output
        // Every handle this process opens is closed again once the program has ended.
        let errorHandle = errors == .separate ? try FileHandle(forWritingTo: errorURL) : nil
        defer { try? errorHandle?.close() }
        switch errors {
        case .separate: process.standardError = errorHandle
        case .merged: process.standardError = output
        case .discarded: process.standardError = FileHandle.nullDevice
        }
        let inputHandle = try input.map { bytes in
            let inputURL = directory.appending(path: "stdin")
            _ = FileManager.default.createFile(atPath: inputURL.path, contents: Data(bytes))
            return try FileHandle(forReadingFrom: inputURL)
        }
        defer { try? inputHandle?.close() }
        if let inputHandle { process.standardInput = inputHandle }
        try await withCheckedThrowingContinuation { (finished: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in finished.resume() }
            do { try process.run() } catch { finished.resume(throwing: error) }
        }
        return ProgramResult(
            status: process.terminationStatus, exited: process.terminationReason == .exit,
            output: String(decoding: try Data(contentsOf: outputURL), as: UTF8.self),
            errors: String(decoding: try Data(contentsOf: errorURL), as: UTF8.self))
    }
}
