import Synchronization

/// A bounded cache of verified chains, keyed by the exact protected header that carried them.
///
/// The header embeds the certificate bytes (`x5c`) and the algorithm, so equal keys mean equal
/// certificates; a hit skips header decoding, certificate parsing and both chain signature checks, leaving
/// one signature check per JWS. The least recently inserted entry is evicted first. Thread-safe.
final class VerifiedChainCache: Sendable {
    /// The entries and their insertion order, behind one lock.
    private struct State {
        var entries: [HeaderKey: VerifiedChain] = [:]
        var order: [HeaderKey] = []
    }

    private let capacity: Int
    private let state = Mutex(State())

    /// Creates an empty cache holding at most `capacity` chains.
    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Returns the chain verified for this header, if it is cached.
    func chain(forHeader header: ArraySlice<UInt8>) -> VerifiedChain? {
        let key = HeaderKey(lookingUp: header)
        return self.state.withLock { $0.entries[key] }
    }

    /// Remembers a verified chain, evicting the oldest entry when full.
    func insert(_ chain: VerifiedChain, forHeader header: ArraySlice<UInt8>) {
        let key = HeaderKey(storing: header)
        self.state.withLock { state in
            if state.entries.updateValue(chain, forKey: key) == nil {
                state.order.append(key)
                if state.order.count > self.capacity {
                    state.entries.removeValue(forKey: state.order.removeFirst())
                }
            }
        }
    }

    /// The number of cached chains.
    var count: Int { self.state.withLock { $0.entries.count } }
}
