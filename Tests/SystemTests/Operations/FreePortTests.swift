import Foundation
import TestSupport
import Testing

/// deploy/local/free-port.sh, which every local script and benchmark picks its services' ports with: a port it handed
/// out is not handed out again for two minutes, so the ports one run picks before its services bind them are distinct.
@Suite(.tags(.integration), .notInUnitRuns) struct FreePortTests {
    /// 400 picks of 10,000 ports: independent random picks repeat one with a probability of 1 − e^(−8), so a picker
    /// without its registry fails here nearly always (a benchmark's customer-api once found its port taken that way).
    @Test func portsPickedOneAfterAnotherAreDistinctAndBelowTheEphemeralRange() async throws {
        let script = LocalComponents.repositoryRoot.appendingPathComponent("deploy/local/free-port.sh").path
        let result = try await Program.run(
            URL(fileURLWithPath: "/bin/bash"), ["-c", "for _ in $(seq 1 400); do \"$0\" || exit 1; done", script],
            errors: .merged)
        #expect(result.status == 0, "\(result.output.suffix(500))")
        let ports = result.output.split(separator: "\n").compactMap { Int($0) }
        #expect(ports.count == 400)
        #expect(Set(ports).count == ports.count, "a port was handed out twice")
        #expect(ports.allSatisfy { (10_000...19_999).contains($0) })
    }
}
