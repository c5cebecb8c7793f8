import Foundation
import Synchronization
import X509

/// Intermediates already validated up to a configured root, by their exact `x5c[1]` text: a chain under one of them
/// needs only its leaf checked (one signature), so Apple's next leaf (a new pod's first notification, a leaf
/// rotation) costs no new-chain budget. Filled by full validations and by ``SignedDataVerifier/warm(intermediates:)``
/// at start; only intermediates that validated get in, so forgeries cannot evict Apple's. The root a header carries
/// is never trusted (only configured roots anchor a chain), so the intermediate alone is the key. Thread-safe.
final class KnownIssuers: Sendable {
    /// A validated intermediate and the window in which it and its root are valid.
    struct Issuer: Sendable {
        let certificate: Certificate
        let validFrom: Date
        let validUntil: Date

        /// Whether the intermediate and its root are valid at `time`.
        func isValid(at time: Date) -> Bool { self.validFrom <= time && time <= self.validUntil }
    }

    private struct State {
        var entries: [String: Issuer] = [:]
        var order: [String] = []
    }

    private let capacity: Int
    private let state = Mutex(State())

    /// An empty set holding at most `capacity` intermediates (the oldest goes first).
    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The validated intermediate whose `x5c` text is `encoded`, if any.
    func issuer(encoded: String) -> Issuer? {
        self.state.withLock { $0.entries[encoded] }
    }

    /// Remembers a validated intermediate under its `x5c` text.
    func insert(_ issuer: Issuer, encoded: String) {
        self.state.withLock { state in
            if state.entries.updateValue(issuer, forKey: encoded) == nil {
                state.order.append(encoded)
                if state.order.count > self.capacity {
                    state.entries.removeValue(forKey: state.order.removeFirst())
                }
            }
        }
    }

    /// How many intermediates are known.
    var count: Int { self.state.withLock { $0.entries.count } }
}
