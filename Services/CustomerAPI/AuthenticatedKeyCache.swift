import Crypto
import Foundation
import Storage
import Synchronization

/// Keys that authenticated in the last few seconds, so a request does not read its key from PostgreSQL every
/// time. Entries are found by the SHA-256 of the token (the token itself is not kept); a revocation or a
/// rotation's end takes effect within `lifetime`. Bounded: when full, it starts again empty.
final class AuthenticatedKeyCache: Sendable {
    private let entries = Mutex<[SHA256Digest: (key: APIKey, until: ContinuousClock.Instant)]>([:])
    let lifetime: Duration
    let capacity: Int

    init(lifetime: Duration = .seconds(5), capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The cached key of a token, if it authenticated less than `lifetime` ago and is still usable.
    func key(for token: String, now: ContinuousClock.Instant = .now) -> APIKey? {
        let digest = SHA256.hash(data: Data(token.utf8))
        return self.entries.withLock { entries -> APIKey? in
            guard let entry = entries[digest], entry.until > now, entry.key.isUsable(at: Date()) else { return nil }
            return entry.key
        }
    }

    /// Remembers a key that just authenticated with `token`.
    func remember(_ key: APIKey, for token: String, now: ContinuousClock.Instant = .now) {
        let digest = SHA256.hash(data: Data(token.utf8))
        self.entries.withLock { entries in
            if entries.count >= self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[digest] = (key, now + self.lifetime)
        }
    }
}
