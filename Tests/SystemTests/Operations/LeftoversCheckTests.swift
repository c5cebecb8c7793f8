import Foundation
import TestSupport
import Testing

/// The test command's last step, deploy/local/leftovers.py: a process a test started (it carries the run's
/// `APPSTORE_TEST_RUN` marker) that outlives the tests fails the run and is killed; none, and the step passes.
@Suite(.tags(.integration), .notInUnitRuns) struct LeftoversCheckTests {
    static let script = LocalComponents.repositoryRoot.appendingPathComponent("deploy/local/leftovers.py")

    /// Runs the check for `run` without a grace period.
    static func check(_ run: String) async throws -> ProgramResult {
        try await Program.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", Self.script.path, run, "--grace-seconds", "0"],
            errors: .merged)
    }

    @Test func aProcessThatOutlivedItsTestFailsTheRunAndIsKilled() async throws {
        let run = "leftovers-test-\(UUID().uuidString)"
        let sleeper = Process()
        sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sleeper.arguments = ["600"]
        sleeper.environment = ProcessInfo.processInfo.environment.merging(["APPSTORE_TEST_RUN": run]) { _, new in new }
        try sleeper.run()
        let found = try await Self.check(run)
        #expect(found.status == 1, "\(found.output)")
        #expect(found.output.contains("\(sleeper.processIdentifier) /bin/sleep 600"), "\(found.output)")
        let status = try await ServiceProcess.exitStatus(of: sleeper)
        #expect(sleeper.terminationReason == .uncaughtSignal && status == SIGKILL, "the leftover was killed")

        let clean = try await Self.check(run)
        #expect(clean.status == 0 && clean.output.contains("no process"), "\(clean.output)")
    }
}
