import Foundation
import TestSupport
import Testing

/// The built `iapctl` binary: exit codes 0/1/2 as documented, and no crash on any input.
@Suite(.tags(.integration), .notInUnitRuns) struct IAPCtlProcessTests {
    /// The `iapctl` built next to the test bundle.
    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("iapctl")
    }

    /// Runs `iapctl` with arguments and standard input; returns exit code, stdout and stderr.
    static func run(_ arguments: [String], input: [UInt8] = []) async throws -> (Int32, String, String) {
        let result = try await Program.run(binary, arguments, input: input)
        #expect(result.exited, "iapctl crashed")
        return (result.status, result.output, result.errors)
    }

    static let sandbox = [
        "verify", "--bundle-id", "com.loki-project.loki-messenger", "--app-apple-id", "1470168868",
        "--environment", "Sandbox",
    ]

    @Test func theBinaryWasBuilt() {
        #expect(FileManager.default.isExecutableFile(atPath: Self.binary.path), "build iapctl before the tests")
    }

    @Test func validInputExitsZeroWithJSON() async throws {
        let (code, out, err) = try await Self.run(
            Self.sandbox + [Fixtures.url("real-sandbox/signedPayload_DID_RENEW").path])
        #expect(code == 0 && err.isEmpty)
        #expect(out.contains("\"transactionId\" : \"2000001024998954\""))
    }

    @Test func invalidInputExitsOneWithOneLine() async throws {
        let (code, out, err) = try await Self.run(Self.sandbox + ["-"], input: Array("a.b.c".utf8))
        #expect(code == 1 && out.isEmpty)
        #expect(err.hasPrefix("invalid: format: ") && err.filter { $0 == "\n" }.count == 1)
    }

    @Test(arguments: [
        ["verify"], ["verify", "--bundle-id", "x"], ["verify", "--bundle-id", "x", "--environment", "Staging"],
        ["verify", "--bundle-id", "x", "--environment", "Sandbox", "--type", "receipt"], ["frobnicate"],
        ["verify", "--bundle-id", "x", "--environment", "Sandbox", "/does/not/exist"],
    ])
    func usageErrorsExitTwo(arguments: [String]) async throws {
        let (code, _, err) = try await Self.run(arguments)
        #expect(code == 2)
        #expect(!err.isEmpty)
    }

    @Test func helpExitsZero() async throws {
        let (code, out, _) = try await Self.run(["verify", "--help"])
        #expect(code == 0 && out.contains("--environment"))
    }

    @Test func arbitraryBytesNeverCrashIt() async throws {
        var generator = SystemRandomNumberGenerator()
        let real = try Fixtures.bytes("real-sandbox/signedPayload_DID_RENEW")
        let inputs: [[UInt8]] = [
            [], [0], Array(repeating: 0x2E, count: 10_000),
            (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) },
            Array(real.prefix(5000)), Array("{\"signedPayload\": 12}".utf8), Array("\u{FEFF}eyJ.eyJ.AA".utf8),
        ]
        for input in inputs {
            let (code, _, _) = try await Self.run(Self.sandbox + ["-"], input: input)
            #expect(code == 1)
        }
    }
}
