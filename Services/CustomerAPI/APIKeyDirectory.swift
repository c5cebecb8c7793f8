import Foundation
import Logging
import ServiceLifecycle
import ServiceRuntime
import Storage
import Synchronization

/// Every API key in memory (id, secret hash, app, role, rate, state), read again from PostgreSQL every
/// `CUSTOMER_API_KEY_REFRESH_MS`: a request is authenticated without a query, so a stream of made-up tokens costs a
/// hash at most and no shared budget that real keys could lose; a new key works, and a revoked or expired one stops
/// working, within one refresh interval. Until the first read the service is not ready (and keys get 503).
final class APIKeyDirectory: Service, Sendable {
    /// The keys by id, nil until the first read.
    private let keys = Mutex<[String: (APIKey, [UInt8])]?>(nil)
    let store: APIKeyStore
    let refresh: Duration
    let logger: Logger

    init(store: APIKeyStore, refresh: Duration, logger: Logger) {
        self.store = store
        self.refresh = refresh
        self.logger = logger
    }

    /// What authenticating a token comes to.
    enum Verdict: Equatable {
        case key(APIKey)
        case refused(APIKeyRefusal)
        /// The keys have not been read yet.
        case loading
    }

    /// The key `token` names, if its secret matches and it is usable at `now`; an unknown id is refused at once.
    func authenticate(_ token: String, now: Date = Date()) -> Verdict {
        guard let (keyId, _) = APIKeyStore.parts(of: token) else { return .refused(.malformed) }
        guard let stored = self.keys.withLock({ $0.map { $0[keyId] } }) else { return .loading }
        switch APIKeyStore.check(token, against: stored, now: now) {
        case .success(let key): return .key(key)
        case .failure(let refusal): return .refused(refusal)
        }
    }

    /// Whether the keys have been read.
    var isLoaded: Bool { self.keys.withLock { $0 != nil } }

    /// Reads every key now.
    func reload() async throws {
        let rows = try await self.store.allKeysWithHashes()
        let byId = Dictionary(
            rows.map { ($0.key.keyId, ($0.key, $0.secretHash)) }, uniquingKeysWith: { first, _ in first })
        self.keys.withLock { $0 = byId }
    }

    /// Reads the keys every ``refresh`` until shutdown; a failed read keeps the keys read before (logged).
    func run() async throws {
        await runPeriodically(every: self.refresh, immediately: true) {
            do {
                try await self.reload()
            } catch {
                self.logger.warning("cannot read the API keys; keeping the last ones", metadata: ["error": "\(error)"])
            }
        }
    }
}
