import Synchronization

/// How many requests each API key has in flight, so one key cannot hold every slot of customer-api (a POST may
/// wait seconds for its commit): past its share a key's next request gets 429 at once, while other keys' requests
/// still find slots.
final class KeyConcurrency: Sendable {
    private let inFlight = Mutex<[String: Int]>([:])
    /// The most requests one key may have in flight (`CUSTOMER_API_KEY_CONCURRENCY`).
    let share: Int

    init(share: Int) {
        self.share = max(1, share)
    }

    /// Takes a slot for the key; false when it already has its share.
    func enter(_ keyId: String) -> Bool {
        self.inFlight.withLock { counts in
            let current = counts[keyId, default: 0]
            guard current < self.share else { return false }
            counts[keyId] = current + 1
            return true
        }
    }

    /// Gives the key's slot back.
    func leave(_ keyId: String) {
        self.inFlight.withLock { counts in
            let remaining = counts[keyId, default: 1] - 1
            counts[keyId] = remaining > 0 ? remaining : nil
        }
    }
}
