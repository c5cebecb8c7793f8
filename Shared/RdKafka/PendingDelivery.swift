import Synchronization

/// A message handed to librdkafka whose delivery report has not been awaited yet.
///
/// Awaiting ``report`` is cancellable: a cancelled waiter stops waiting (the message stays in flight and
/// may still be delivered), which lets a caller answer by a deadline without losing track of anything.
public struct PendingDelivery: Sendable {
    let promise: DeliveryPromise

    /// Where the broker stored the message, once it acknowledged it.
    ///
    /// - Throws: ``KafkaError`` when delivery failed, `CancellationError` when the waiting task was cancelled.
    public var report: DeliveryReport {
        get async throws { try await self.promise.value() }
    }

    /// Calls `body` with the outcome once the broker acknowledged the message or delivery failed, on the delivery
    /// poller's thread (keep it short), instead of a task awaiting ``report``: for a caller that only counts
    /// outcomes, one task per message was most of what a fire-and-forget produce cost. Use this or ``report``, once.
    public func whenReported(_ body: @escaping @Sendable (Result<DeliveryReport, KafkaError>) -> Void) {
        self.promise.notify(body)
    }
}

/// The one-shot result of a delivery, resolved by the delivery-report poller and awaited at most once.
final class DeliveryPromise: Sendable {
    private enum State {
        case pending
        case waiting(CheckedContinuation<DeliveryReport, any Error>)
        case notifying(@Sendable (Result<DeliveryReport, KafkaError>) -> Void)
        case resolved(Result<DeliveryReport, KafkaError>)
        case abandoned
    }

    private let state = Mutex(State.pending)

    /// Records the outcome and wakes the waiter, if any. Later calls are ignored.
    func resolve(_ result: Result<DeliveryReport, KafkaError>) {
        let notify = self.state.withLock { state -> (@Sendable (Result<DeliveryReport, KafkaError>) -> Void)? in
            switch state {
            case .pending: state = .resolved(result)
            case .waiting(let continuation):
                state = .resolved(result)
                continuation.resume(with: result.mapError { $0 as any Error })
            case .notifying(let body):
                state = .resolved(result)
                return body
            case .resolved, .abandoned: break
            }
            return nil
        }
        notify?(result)
    }

    /// Calls `body` with the outcome when it is known (at once if it is already).
    func notify(_ body: @escaping @Sendable (Result<DeliveryReport, KafkaError>) -> Void) {
        let known = self.state.withLock { state -> Result<DeliveryReport, KafkaError>? in
            switch state {
            case .pending:
                state = .notifying(body)
                return nil
            case .resolved(let result): return result
            case .waiting, .notifying, .abandoned:
                return .failure(KafkaError(.delivery, "a delivery can be awaited only once"))
            }
        }
        if let known { body(known) }
    }

    /// Waits for the outcome; cancelling the waiting task stops the wait with `CancellationError`.
    func value() async throws -> DeliveryReport {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<DeliveryReport, any Error>) in
                self.state.withLock { state in
                    switch state {
                    case .pending: state = .waiting(continuation)
                    case .resolved(let result): continuation.resume(with: result.mapError { $0 as any Error })
                    case .abandoned: continuation.resume(throwing: CancellationError())
                    case .waiting, .notifying:
                        continuation.resume(throwing: KafkaError(.delivery, "a delivery can be awaited only once"))
                    }
                }
            }
        } onCancel: {
            self.state.withLock { state in
                switch state {
                case .pending: state = .abandoned
                case .waiting(let continuation):
                    state = .abandoned
                    continuation.resume(throwing: CancellationError())
                case .notifying, .resolved, .abandoned: break
                }
            }
        }
    }
}
