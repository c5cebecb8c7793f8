import Foundation
import Synchronization
import UnixSignals

/// SIGINT and SIGTERM caught for a long command, so it can stop starting new work and finish what is in flight
/// (instead of dying with it half done). A second signal is caught too: the command still ends as soon as its
/// work in flight has.
final class InterruptSignal: Sendable {
    /// Whether a signal came (a class of its own, so the listening task can hold it before `self` exists).
    private final class Flag: Sendable {
        let value = Mutex(false)
    }
    private let flag = Flag()
    private let listener: Task<Void, Never>

    /// Starts catching SIGINT and SIGTERM.
    init() {
        let flag = self.flag
        self.listener = Task {
            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
                flag.value.withLock { $0 = true }
                StandardStreams.writeError("\ninterrupted: finishing the work in flight")
            }
        }
    }

    /// Whether a signal came.
    var received: Bool { self.flag.value.withLock { $0 } }

    /// Stops catching the signals.
    func stopListening() { self.listener.cancel() }
}
