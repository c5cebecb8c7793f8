import Synchronization

/// The notification requests ingest is handling now, from their first byte to their answer. A record whose request
/// is alone in flight is sent at once instead of after the producer's linger: no other request is under way to join
/// its batch, so waiting would only delay the answer (``NotificationController``).
final class RequestsInFlight: Sendable {
    private let count = Atomic<Int>(0)

    /// Counts a request that arrived.
    func begin() {
        self.count.add(1, ordering: .relaxed)
    }

    /// Counts a request answered.
    func end() {
        self.count.subtract(1, ordering: .relaxed)
    }

    /// How many requests are in flight.
    var current: Int {
        self.count.load(ordering: .relaxed)
    }

    /// Whether the caller's request is the only one in flight.
    var isAlone: Bool {
        self.current == 1
    }
}
