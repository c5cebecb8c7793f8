import ServiceRuntime
import Synchronization
import Testing

/// The deadline that leaves stuck work behind: a call that never returns (not even when cancelled, as a query on
/// a connection cut by a server crash) no longer holds its caller; fast work gives its value or error unchanged.
@Suite struct DeadlineTests {
    @Test func workThatIgnoresCancellationIsAbandonedAtTheDeadline() async throws {
        let gate = NeverOpenedGate()
        await #expect(throws: DeadlineExceeded.self) {
            try await withAbandoningDeadline(.milliseconds(200)) { await gate.waitIgnoringCancellation() }
        }
        #expect(gate.waiters == 1, "the stuck work had started and is still waiting behind")
        gate.open()
    }

    @Test func fastWorkGivesItsValueOrError() async throws {
        let value = try await withAbandoningDeadline(.seconds(30)) { 42 }
        #expect(value == 42)
        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await withAbandoningDeadline(.seconds(30)) { throw Failure() } }
    }

    @Test func cancellingTheCallerEndsTheWait() async throws {
        let gate = NeverOpenedGate()
        let caller = Task { try await withAbandoningDeadline(.seconds(600)) { await gate.waitIgnoringCancellation() } }
        while gate.waiters == 0 { await Task.yield() }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        gate.open()
    }
}

/// A wait that only ends when the test opens the gate, whatever cancellation says.
private final class NeverOpenedGate: Sendable {
    private let state = Mutex<(waiters: Int, continuations: [CheckedContinuation<Void, Never>])>((0, []))

    var waiters: Int { self.state.withLock { $0.waiters } }

    func waitIgnoringCancellation() async {
        await withCheckedContinuation { continuation in
            self.state.withLock {
                $0.waiters += 1
                $0.continuations.append(continuation)
            }
        }
    }

    func open() {
        for continuation in self.state.withLock({ state in
            defer { state.continuations = [] }
            return state.continuations
        }) {
            continuation.resume()
        }
    }
}
