import Foundation
import TestSupport
import Testing

/// Benchmarks/steal.py, whose line under each part of `run-all.sh` says how much of the CPU the hypervisor took while
/// the part ran: the shares it reports, a watch that did not run failing the part, and a real watch stopped as
/// `run-all.sh` stops it.
@Suite(.tags(.integration), .notInUnitRuns) struct StealReportTests {
    let script = LocalComponents.repositoryRoot.appendingPathComponent("Benchmarks/steal.py").path

    /// Runs `steal.py` with `arguments`.
    func steal(_ arguments: [String]) async throws -> ProgramResult {
        try await Program.run(URL(fileURLWithPath: "/usr/bin/python3"), [self.script] + arguments, errors: .merged)
    }

    /// Writes `text` to a file in `directory` and returns its path.
    func samples(_ text: String, in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("part.steal")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    /// 410 of 3,000 ticks over the part, 400 of 1,000 in its second second: both shares, and the warning.
    @Test func reportsTheShareOverThePartAndItsWorstSecond() async throws {
        let directory = try LocalComponents.temporaryDirectory("steal")
        defer { try? FileManager.default.removeItem(at: directory) }
        let noisy = try await self.steal(["report", try self.samples("1000 0\n2000 10\n3000 410\n", in: directory)])
        #expect(noisy.status == 0, "\(noisy.output)")
        #expect(
            noisy.output.hasPrefix(
                "hypervisor steal: 20.5% of the CPU time over the part, 40.0% in its worst second (the host took"),
            "\(noisy.output)")
        let quiet = try await self.steal(["report", try self.samples("1000 0\n2000 1\n3000 2\n", in: directory)])
        #expect(
            quiet.output == "hypervisor steal: 0.1% of the CPU time over the part, 0.1% in its worst second\n",
            "\(quiet.output)")
    }

    /// A file with one sample is a watch that never ran: the report says so and exits 1, which fails the part.
    @Test func aWatchThatDidNotRunFailsTheReport() async throws {
        let directory = try LocalComponents.temporaryDirectory("steal")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await self.steal(["report", try self.samples("1000 0\n", in: directory)])
        #expect(result.status == 1)
        #expect(result.output.contains("not measured (1 samples"), "\(result.output)")
        #expect(try await self.steal(["sideways"]).status == 2)
    }

    /// A watch started and stopped with SIGTERM, as `run-all.sh` does around a part: its first sample is written at
    /// once and its last when stopped, so even a part shorter than a second is reported.
    @Test func aStoppedWatchLeavesTwoSamplesAndAReport() async throws {
        let directory = try LocalComponents.temporaryDirectory("steal")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("part.steal").path
        let result = try await Program.run(
            URL(fileURLWithPath: "/bin/bash"),
            [
                "-c",
                #"python3 "$0" watch "$1" & watch=$!; until [[ -s $1 ]]; do sleep 0.05; done; "#
                    + #"kill "$watch"; wait "$watch"; echo "watch exited $?"; python3 "$0" report "$1""#,
                self.script, file,
            ],
            errors: .merged)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("watch exited 0"), "\(result.output)")
        #expect(result.output.contains("hypervisor steal: "), "\(result.output)")
        #expect(!result.output.contains("not measured"), "\(result.output)")
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count >= 2)
    }
}
