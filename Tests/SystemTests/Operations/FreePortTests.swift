import Foundation
import TestSupport
import Testing

/// deploy/local/free-port.sh, which every local script and benchmark picks its services' ports with: a port it handed
/// out is not handed out again while it is reserved, so the ports one run picks before its services bind them are
/// distinct.
@Suite(.tags(.integration), .notInUnitRuns) struct FreePortTests {
    /// 400 picks of 10,000 ports, four at a time: independent random picks repeat one with a probability of
    /// 1 − e^(−8), so a picker without its registry (or without the registry's lock) fails here nearly always (a
    /// benchmark's customer-api once found its port taken that way). The test has a registry of its own and reserves
    /// each port for an hour: with the default two minutes, a slow machine's picks (400 took 220 s in one CI run)
    /// outlived their reservation and were rightly handed out again, so the test would have measured the clock.
    @Test func portsPickedWhileReservedAreDistinctAndBelowTheEphemeralRange() async throws {
        let script = LocalComponents.repositoryRoot.appendingPathComponent("deploy/local/free-port.sh").path
        let directory = try LocalComponents.temporaryDirectory("free-port")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await Program.run(
            URL(fileURLWithPath: "/bin/bash"),
            ["-c", "seq 1 400 | xargs -P 4 -I{} \"$0\"", script],
            environment: [
                "FREE_PORT_REGISTRY": directory.appendingPathComponent("registry").path,
                "FREE_PORT_RESERVED_SECONDS": "3600",
            ],
            errors: .merged)
        #expect(result.status == 0, "\(result.output.suffix(500))")
        let ports = result.output.split(separator: "\n").compactMap { Int($0) }
        #expect(ports.count == 400)
        #expect(Set(ports).count == ports.count, "a port was handed out twice")
        #expect(ports.allSatisfy { (10_000...19_999).contains($0) })
    }
}
