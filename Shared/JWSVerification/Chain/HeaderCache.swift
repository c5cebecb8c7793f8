import Synchronization

/// A bounded cache of what was learned from a JWS protected header, keyed by the header's exact bytes: the
/// verifier's verified chains (``SignedDataVerifier``), and ingest's header facts (``JWSHeaderFacts``).
///
/// The header embeds the certificate bytes (`x5c`) and the algorithm, so equal keys mean equal certificates
/// and algorithm; a hit skips decoding the header (and, for a chain, parsing the certificates and both chain
/// signature checks). The least recently inserted entry is evicted first, so a flood of distinct headers only
/// costs misses. Thread-safe.
public final class HeaderCache<Value: Sendable>: Sendable {
    /// The entries and their insertion order, behind one lock.
    private struct State {
        var entries: [HeaderKey: Value] = [:]
        var order: [HeaderKey] = []
    }

    private let capacity: Int
    private let state = Mutex(State())

    /// Creates an empty cache holding at most `capacity` values.
    public init(capacity: Int) {
        self.capacity = capacity
    }

    /// The value remembered for this header (base64url bytes, as in the JWS), if any.
    public func value(forHeader header: ArraySlice<UInt8>) -> Value? {
        let key = HeaderKey(lookingUp: header)
        return self.state.withLock { $0.entries[key] }
    }

    /// Remembers a value for a header, evicting the oldest entry when full.
    public func insert(_ value: Value, forHeader header: ArraySlice<UInt8>) {
        let key = HeaderKey(storing: header)
        self.state.withLock { state in
            if state.entries.updateValue(value, forKey: key) == nil {
                state.order.append(key)
                if state.order.count > self.capacity {
                    state.entries.removeValue(forKey: state.order.removeFirst())
                }
            }
        }
    }

    /// The number of remembered headers.
    public var count: Int { self.state.withLock { $0.entries.count } }
}
