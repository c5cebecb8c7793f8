import Synchronization

/// A deadline passed before the work finished.
public struct DeadlineExceeded: Error, Sendable {}

// MARK: - A deadline that leaves stuck work behind

/// Runs `body` in a task of its own and waits at most `timeout` for it: past the deadline the task is cancelled
/// and left behind, and ``DeadlineExceeded`` is thrown at once. For calls into a library that may never return
/// when its peer vanishes (a PostgreSQL query on a connection cut by a server crash), so the caller can retry on
/// a fresh connection instead of hanging for ever. Cancelling the caller cancels the work too.
public func withAbandoningDeadline<T: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> T)
    async throws -> T
{
    let outcome = SingleOutcome<T>()
    let work = Task { outcome.finish(with: await Result(catching: body)) }
    let timer = Task {
        try await Task.sleep(for: timeout)
        outcome.finish(with: .failure(DeadlineExceeded()))
    }
    defer {
        work.cancel()
        timer.cancel()
    }
    return try await withTaskCancellationHandler {
        try await outcome.value()
    } onCancel: {
        outcome.finish(with: .failure(CancellationError()))
    }
}

/// The first of several racing results, handed to one waiter.
private final class SingleOutcome<T: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<T, any Error>)
        case finished(Result<T, any Error>)
        case delivered
    }

    private let state = Mutex<State>(.empty)

    /// Records `result` unless an earlier one won; resumes the waiter if there is one.
    func finish(with result: Result<T, any Error>) {
        let waiter: CheckedContinuation<T, any Error>? = self.state.withLock { state in
            switch state {
            case .empty:
                state = .finished(result)
                return nil
            case .waiting(let continuation):
                state = .delivered
                return continuation
            case .finished, .delivered:
                return nil
            }
        }
        waiter?.resume(with: result)
    }

    /// Waits for the first result.
    func value() async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<T, any Error>? = self.state.withLock { state in
                if case .finished(let result) = state {
                    state = .delivered
                    return result
                }
                state = .waiting(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}

extension Result where Failure == any Error {
    /// The outcome of async throwing work.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

// MARK: - Waiting for a condition

/// Asks `probe` until it returns a value or `bound` has passed (then nil): at once, then after pauses doubling
/// from `firstPause` up to `longestPause`. For "answer once the write has landed, else say it is on its way".
public func pollUntil<T>(
    within bound: Duration, firstPause: Duration = .milliseconds(10), longestPause: Duration = .milliseconds(200),
    _ probe: () async throws -> T?
) async throws -> T? {
    let deadline = ContinuousClock.now + bound
    var pause = firstPause
    while true {
        if let value = try await probe() { return value }
        guard ContinuousClock.now + pause < deadline else { return nil }
        try await Task.sleep(for: pause)
        pause = min(pause * 2, longestPause)
    }
}
