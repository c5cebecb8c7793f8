import Synchronization

/// A wake-up per endpoint: the consumer raises an endpoint's when it queued deliveries for it, and the endpoint's
/// worker, idle, waits on it for at most its poll interval. A raise while the worker is busy is kept, so nothing
/// queued waits for the poll.
final class Wakeups: Sendable {
    private let signals = Mutex<[String: Signal]>([:])

    /// The endpoint's signal (made on first use).
    func signal(_ endpointId: String) -> Signal {
        self.signals.withLock { signals in
            if let signal = signals[endpointId] { return signal }
            let signal = Signal()
            signals[endpointId] = signal
            return signal
        }
    }

    /// Wakes the endpoint's worker.
    func wake(_ endpointId: String) {
        self.signal(endpointId).raise()
    }
}

/// A flag one task raises and another waits for, with a time limit.
final class Signal: Sendable {
    private struct State {
        var raised = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    /// Raises the flag, resuming the waiter if there is one.
    func raise() {
        let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.raised = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns when the flag is raised (lowering it) or after `timeout`, whichever is first.
    func wait(upTo timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitRaised() }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Waits until raised or cancelled.
    private func waitRaised() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = self.state.withLock { state -> Bool in
                    if state.raised || Task.isCancelled {
                        state.raised = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
