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

/// The deadline that waits for the cancelled work (ingest's and customer-api's body reads): work past the
/// deadline is cancelled and the caller gets ``DeadlineExceeded``; work in time gives its value or its own error;
/// cancelling the caller cancels the work.
@Suite struct WaitingDeadlineTests {
    @Test func workPastTheDeadlineIsCancelledAndReportedAsTheDeadline() async throws {
        let started = ContinuousClock.now
        let sawCancellation = Mutex(false)
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(150)) {
                do {
                    try await Task.sleep(for: .seconds(600))
                } catch {
                    sawCancellation.withLock { $0 = true }
                    throw error
                }
            }
        }
        let waited = ContinuousClock.now - started
        // Not the work's 600 s: it was cancelled. The upper bound is loose because the full suite starts dozens of
        // tests at once on two cores, and a test can wait many seconds for a thread (CI saw 14.5 s).
        #expect(waited >= .milliseconds(150) && waited < .seconds(300), "\(waited)")
        #expect(sawCancellation.withLock { $0 }, "the work was cancelled, and awaited before the caller went on")
    }

    @Test func workInTimeGivesItsValueOrErrorAndNoDeadlineFiresLater() async throws {
        #expect(try await withDeadline(.milliseconds(100)) { 42 } == 42)
        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await withDeadline(.seconds(30)) { throw Failure() } }
        // The timer of a finished call is cancelled: a short deadline that has long passed does not touch later work.
        try await Task.sleep(for: .milliseconds(200))
        #expect(
            try await withDeadline(.seconds(30)) {
                try await Task.sleep(for: .milliseconds(50))
                return "late"
            } == "late")
    }

    @Test func cancellingTheCallerCancelsTheWork() async throws {
        let started = Mutex(false)
        let caller = Task {
            try await withDeadline(.seconds(600)) {
                started.withLock { $0 = true }
                try await Task.sleep(for: .seconds(600))
            }
        }
        while !started.withLock({ $0 }) { await Task.yield() }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
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
