import AppStoreModels
import Crypto
import Foundation
import Hummingbird
import JWSVerification
import Logging
import NotificationPipeline
import PipelineRecords
import ServiceRuntime
import Storage
import Synchronization
import TestSupport
import Testing

@testable import CustomerAPI

/// customer-api's read route, a process of its binary, against a real PostgreSQL written by the updater's own repository: entitlements
/// as of the request time, per environment, with an ETag; and every refusal (401, 403, 404, 400, 429) as a
/// JSON error that writes nothing.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct CustomerLookupRouteTests {
    static let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    static let app = "com.example.app"
    static let day: Int64 = 86_400_000

    let logger: Logger = {
        var logger = Logger(label: "customer-api-test")
        logger.logLevel = .error
        return logger
    }()

    /// A verified notification about `original`, bought with the test token, signed `signedAgo` ago and
    /// expiring `expiresIn` from now (nil: a product without expiry).
    static func record(
        _ type: String, _ subtype: String? = nil, original: String, signedAgo: Int64, expiresIn: Int64?,
        product: ProductType = .autoRenewableSubscription, productId: String = "pro.monthly",
        environment: AppStoreModels.Environment = .production
    ) -> VerifiedNotificationRecord {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var record = VerifiedRecords.step(type, subtype, original: original, day: 0, expiresDay: 0, product: product)
        record.environment = environment.rawValue
        record.notification.payload.notificationUUID = "\(original)-\(type)-\(environment.rawValue)"
        record.notification.payload.signedDate = Timestamp(millisecondsSince1970: now - signedAgo)
        record.notification.payload.data?.environment = environment
        record.notification.transaction?.environment = environment
        record.notification.transaction?.appAccountToken = token
        record.notification.transaction?.productId = product == .autoRenewableSubscription ? productId : "lifetime"
        record.notification.transaction?.signedDate = Timestamp(millisecondsSince1970: now - signedAgo)
        record.notification.transaction?.purchaseDate = Timestamp(millisecondsSince1970: now - signedAgo)
        record.notification.transaction?.expiresDate = expiresIn.map { Timestamp(millisecondsSince1970: now + $0) }
        return record
    }

    /// A database with: an active subscription, one that expired after its last notification, a lifetime
    /// purchase, and a Sandbox subscription of the same customer; and two keys (this app, rate 3; another app).
    func withAPI(_ body: @Sendable (ServiceHTTPClient, String, String) async throws -> Void) async throws {
        try await self.withAPIAndDeadKeys { client, key, otherKey, _, _ in try await body(client, key, otherKey) }
    }

    /// ``withAPI(_:)`` that also hands over tokens of this app's keys that no longer work (one revoked, one past its
    /// rotation grace) and the database URL; customer-api reads its keys every `keyRefreshMs`.
    func withAPIAndDeadKeys(
        keyRate: Int = 3, keyRefreshMs: Int = 2000,
        _ body: @Sendable (ServiceHTTPClient, String, String, [String], String) async throws -> Void
    ) async throws {
        let logger = self.logger
        try await withLocalPostgres { url in
            let (key, otherKey, deadKeys) = try await DatabaseClient.with(
                try DatabaseSettings(url: url), logger: logger
            ) { client in
                try await MigrationRunner().migrate(client: client, logger: logger)
                let repository = EntitlementRepository(client: client, logger: logger)
                let day = Self.day
                let records: [VerifiedNotificationRecord] = [
                    Self.record(
                        "SUBSCRIBED", "INITIAL_BUY", original: "sub-active", signedAgo: day, expiresIn: 29 * day),
                    Self.record(
                        "SUBSCRIBED", "INITIAL_BUY", original: "sub-lapsed", signedAgo: 40 * day, expiresIn: -10 * day,
                        productId: "pro.yearly"),
                    Self.record(
                        "ONE_TIME_CHARGE", original: "life-1", signedAgo: day, expiresIn: nil, product: .nonConsumable),
                    Self.record(
                        "SUBSCRIBED", "INITIAL_BUY", original: "sandbox-1", signedAgo: day, expiresIn: 6 * day,
                        environment: .sandbox),
                ]
                for record in records {
                    _ = try await repository.apply(record, receivedAt: nil)
                }
                let store = APIKeyStore(client: client, logger: logger)
                let revoked = try await store.create(bundleId: Self.app)
                try await store.revoke(revoked.key.keyId)
                let expired = try await store.create(bundleId: Self.app)
                _ = try await store.rotate(expired.key.keyId, grace: .zero)
                return (
                    try await store.create(bundleId: Self.app, ratePerSecond: keyRate).token,
                    try await store.create(bundleId: "com.example.other").token,
                    [revoked.token, expired.token]
                )
            }
            // customer-api as a process of its binary: the read routes alone (no purchases configured).
            let fleet = try ServiceFleet(
                environment: [
                    "DATABASE_URL": url, "LOG_LEVEL": "warning",
                    "CUSTOMER_API_KEY_REFRESH_MS": String(keyRefreshMs),
                ],
                directory: try LocalComponents.temporaryDirectory("customer-lookup"), only: ["customer-api"])
            try await fleet.whileRunning {
                try await body(ServiceHTTPClient(baseURL: await fleet.customerAPIURL), key, otherKey, deadKeys, url)
            }
        }
    }

    static func get(_ client: ServiceHTTPClient, _ path: String, key: String?, etag: String? = nil) async throws
        -> ServiceResponse
    {
        var headers = HTTPFields()
        if let key { headers[.authorization] = "Bearer \(key)" }
        if let etag { headers[.ifNoneMatch] = etag }
        return try await client.execute(uri: path, method: .get, headers: headers)
    }

    static func json(_ response: ServiceResponse) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any] ?? [:]
    }

    @Test func entitlementsAreEvaluatedAtTheRequestTimePerEnvironment() async throws {
        try await withAPIAndDeadKeys(keyRate: 1000) { client, key, _, _, _ in
            let path = "/v1/apps/\(Self.app)/customers/\(Self.token)?idType=appAccountToken"
            let response = try await Self.get(client, path + "&environment=Production", key: key)
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let view = try JSONDecoder().decode(CustomerView.self, from: Data(buffer: response.body))
            let active = Dictionary(
                view.entitlements.map { ($0.originalTransactionId, $0.active) }, uniquingKeysWith: { a, _ in a })
            #expect(
                active == ["sub-active": true, "sub-lapsed": false, "life-1": true],
                "the lapsed one was active at its last notification, not now")
            #expect(view.subscriptions.map(\.originalTransactionId).sorted() == ["sub-active", "sub-lapsed"])
            #expect(view.purchases.map(\.productId) == ["lifetime"])
            #expect(view.entitlements.allSatisfy { $0.environment == "Production" })
            // Without `environment`: Production only (Production is configured), so a Sandbox purchase is never
            // read as access beside Production's; `all` reads every environment.
            let unnamedResponse = try await Self.get(client, path, key: key)
            #expect(unnamedResponse.status == .ok, "\(String(buffer: unnamedResponse.body))")
            let unnamed = try JSONDecoder().decode(CustomerView.self, from: Data(buffer: unnamedResponse.body))
            #expect(unnamed.entitlements.allSatisfy { $0.environment == "Production" } && !unnamed.entitlements.isEmpty)
            let everywhereResponse = try await Self.get(client, path + "&environment=all", key: key)
            #expect(everywhereResponse.status == .ok, "\(String(buffer: everywhereResponse.body))")
            let everywhere = try JSONDecoder().decode(CustomerView.self, from: Data(buffer: everywhereResponse.body))
            #expect(
                everywhere.entitlements.contains {
                    $0.environment == "Sandbox" && $0.originalTransactionId == "sandbox-1" && $0.active
                })
            let byPurchase = try await Self.get(
                client, "/v1/apps/\(Self.app)/customers/life-1?environment=Production&idType=originalTransactionId",
                key: key)
            let byPurchaseView = try JSONDecoder().decode(CustomerView.self, from: Data(buffer: byPurchase.body))
            #expect(
                byPurchaseView.entitlements.map(\.originalTransactionId) == ["life-1"],
                "an originalTransactionId names the customer too")
        }
    }

    /// An id of one kind never matches another kind: an app user id chosen to equal someone's appAccountToken or
    /// originalTransactionId reads nothing of theirs; the same ids with their own kind do; an unknown kind is 400.
    @Test func lookUpsNameTheKindOfId() async throws {
        try await withAPIAndDeadKeys(keyRate: 1000) { client, key, _, _, _ in
            let base = "/v1/apps/\(Self.app)/customers/"
            for colliding in [Self.token, "sub-active", "life-1"] {
                let asUser = try await Self.get(client, base + colliding, key: key)
                #expect(asUser.status == .notFound, "app user id \(colliding) reads nothing of another kind")
                let explicit = try await Self.get(client, base + colliding + "?idType=appUserId", key: key)
                #expect(explicit.status == .notFound)
            }
            let byToken = try await Self.get(client, base + Self.token + "?idType=appAccountToken", key: key)
            #expect(byToken.status == .ok)
            let upperCase = try await Self.get(
                client, base + Self.token.uppercased() + "?idType=appAccountToken", key: key)
            #expect(upperCase.status == .ok, "a token is compared lowercased")
            let byOriginal = try await Self.get(client, base + "sub-active?idType=originalTransactionId", key: key)
            let view = try JSONDecoder().decode(CustomerView.self, from: Data(buffer: byOriginal.body))
            #expect(
                view.subscriptions.map(\.originalTransactionId) == ["sub-active"],
                "one purchase, nothing else of its customer")
            #expect(
                try await Self.get(client, base + Self.token + "?idType=originalTransactionId", key: key).status
                    == .notFound,
                "a token is not an originalTransactionId")
            #expect(
                try await Self.get(client, base + "sub-active?idType=appAccountToken", key: key).status == .notFound)
            let bad = try await Self.get(client, base + "x?idType=email", key: key)
            let badError = try Self.json(bad)["error"] as? String
            #expect(bad.status == .badRequest && badError == "bad-id-type")
        }
    }

    @Test func withoutPurchaseSettingsThePostSays503NotConfigured() async throws {
        try await withAPI { client, key, _ in
            var headers = HTTPFields()
            headers[.authorization] = "Bearer \(key)"
            let response = try await client.execute(
                uri: "/v1/apps/\(Self.app)/customers/user-1/transactions", method: .post, headers: headers,
                body: ByteBuffer(string: #"{"transactionId":"1"}"#))
            #expect(response.status == .serviceUnavailable)
            #expect(try Self.json(response)["error"] as? String == "not-configured")
        }
    }

    @Test func theETagLetsAClientSkipAnUnchangedAnswer() async throws {
        try await withAPI { client, key, _ in
            let path = "/v1/apps/\(Self.app)/customers/\(Self.token)?idType=appAccountToken"
            let first = try await Self.get(client, path, key: key)
            let tag = try #require(first.headers[.eTag])
            let again = try await Self.get(client, path, key: key, etag: tag)
            #expect(again.status == .notModified && again.body.readableBytes == 0)
            #expect(try await Self.get(client, path, key: key, etag: "\"stale\"").status == .ok)
        }
    }

    @Test func refusalsAreJSONErrors() async throws {
        try await withAPI { client, key, otherKey in
            let path = "/v1/apps/\(Self.app)/customers/\(Self.token)?idType=appAccountToken"
            let missing = try await Self.get(client, path, key: nil)
            #expect(missing.status == .unauthorized && missing.headers[.wwwAuthenticate] == "Bearer")
            let missingError = try Self.json(missing)["error"] as? String
            #expect(missingError == "unauthorized")
            #expect(try await Self.get(client, path, key: "ck_0123456789abcdef_wrong").status == .unauthorized)
            let forbidden = try await Self.get(client, path, key: otherKey)
            let forbiddenError = try Self.json(forbidden)["error"] as? String
            #expect(forbidden.status == .forbidden && forbiddenError == "wrong-app")
            let unknown = try await Self.get(client, "/v1/apps/\(Self.app)/customers/nobody", key: key)
            let unknownError = try Self.json(unknown)["error"] as? String
            #expect(unknown.status == .notFound && unknownError == "unknown-customer")
            let badEnvironment = try await Self.get(client, path + "&environment=Staging", key: key)
            let badError = try Self.json(badEnvironment)["error"] as? String
            #expect(badEnvironment.status == .badRequest && badError == "bad-environment")
        }
    }

    /// No key, a malformed one, an unknown key id, a wrong secret, a revoked key and one past its rotation grace
    /// all get the same 401 body: an answer tells a prober nothing about which keys exist.
    @Test func everyKeyFailureGetsTheSameAnswer() async throws {
        try await withAPIAndDeadKeys(keyRate: 1000) { client, key, _, deadKeys, _ in
            let path = "/v1/apps/\(Self.app)/customers/nobody"
            let keyId = key.split(separator: "_")[1]
            let tokens: [String?] =
                [nil, "nonsense", "ck_0123456789abcdef_unknown", "ck_\(keyId)_wrongsecret"] + deadKeys
            var bodies: Set<String> = []
            for token in tokens {
                let response = try await Self.get(client, path, key: token)
                #expect(response.status == .unauthorized, "\(token ?? "no key")")
                bodies.insert(String(buffer: response.body))
            }
            #expect(bodies.count == 1, "one answer for every failure: \(bodies)")
            #expect(try await Self.get(client, path, key: key).status == .notFound, "the live key still works")
            #expect(bodies.first?.contains(APIKeyMiddleware.refusal) == true)
        }
    }

    /// The attack of trust round two: a flood of random well-formed tokens (64 senders at once) while the app's real
    /// key reads its customer. Keys are held in memory, so a made-up token is refused without a query or any budget a
    /// real key shares: the real key's requests are all answered 200 (figure printed; goal at least 99 %). The flood
    /// fills both cores for as long as the real key's 300 requests take, so it takes turns with the whole-pipeline
    /// suites (`.heavy`): beside two of them and five other tests it once ran past its 3 minutes.
    @Test(.heavy) func aRealKeyIsAnsweredWhileRandomTokensFlood() async throws {
        try await withAPIAndDeadKeys(keyRate: 1000) { client, key, _, _, _ in
            let path = "/v1/apps/\(Self.app)/customers/\(Self.token)?idType=appAccountToken"
            let flooding = FloodFlag()
            let (floodStatuses, realStatuses) = try await withThrowingTaskGroup(
                of: (flood: [HTTPResponse.Status], real: [HTTPResponse.Status]).self
            ) { group in
                for _ in 0..<64 {
                    group.addTask {
                        var statuses: [HTTPResponse.Status] = []
                        while flooding.isOn {
                            let token =
                                "ck_\(String(UInt64.random(in: 0...UInt64.max), radix: 16).leftPadded(16))_"
                                + UUID().uuidString
                            statuses.append(try await Self.get(client, path, key: token).status)
                        }
                        return (statuses, [])
                    }
                }
                group.addTask {
                    var statuses: [HTTPResponse.Status] = []
                    for _ in 0..<300 { statuses.append(try await Self.get(client, path, key: key).status) }
                    flooding.stop()
                    return ([], statuses)
                }
                return try await group.reduce(into: ([HTTPResponse.Status](), [HTTPResponse.Status]())) {
                    $0.0 += $1.flood
                    $0.1 += $1.real
                }
            }
            let answered = realStatuses.filter { $0 == .ok }.count
            print(
                "key flood: the real key's requests answered 200: \(answered)/\(realStatuses.count) "
                    + "(\(Double(answered * 1000 / realStatuses.count) / 10) %) while \(floodStatuses.count) random tokens "
                    + "were refused")
            #expect(answered == realStatuses.count, "every one of the real key's requests answered: \(realStatuses)")
            #expect(
                floodStatuses.count > 300 && floodStatuses.allSatisfy { $0 == .unauthorized }, "the flood ran, all 401")
            #expect(
                try await Self.get(client, path, key: "not-even-a-key").status == .unauthorized,
                "a malformed token costs nothing, 401")
        }
    }

    /// Keys live in memory and are read again every refresh (here 300 ms): a key created while the service runs
    /// starts working, a revoked one stops, without a restart; the delays are printed.
    @Test func newAndRevokedKeysTakeEffectWithinTheRefreshInterval() async throws {
        try await withAPIAndDeadKeys(keyRate: 1000, keyRefreshMs: 300) { client, key, _, _, url in
            let path = "/v1/apps/\(Self.app)/customers/nobody"
            let logger = self.logger
            let (created, keyId) = try await DatabaseClient.with(try DatabaseSettings(url: url), logger: logger) {
                let issued = try await APIKeyStore(client: $0, logger: logger).create(bundleId: Self.app)
                return (issued.token, issued.key.keyId)
            }
            /// Seconds until `key` is answered `status` (polled every 50 ms, at most 30 s).
            func secondsUntil(_ key: String, _ status: HTTPResponse.Status) async throws -> Double? {
                let start = ContinuousClock.now
                for _ in 0..<600 {
                    if try await Self.get(client, path, key: key).status == status {
                        return Double((ContinuousClock.now - start) / .milliseconds(1)) / 1000
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
                return nil
            }
            let works = try await secondsUntil(created, .notFound)
            #expect(works != nil, "the new key works without a restart")
            _ = try await DatabaseClient.with(try DatabaseSettings(url: url), logger: logger) {
                try await APIKeyStore(client: $0, logger: logger).revoke(keyId)
            }
            let stops = try await secondsUntil(created, .unauthorized)
            #expect(stops != nil, "the revoked key stops working")
            print(
                "api keys in memory: a new key worked after \(works ?? -1) s, a revoked one stopped after \(stops ?? -1) s"
            )
            #expect(try await Self.get(client, path, key: key).status == .notFound, "the other key is untouched")
        }
    }

    @Test func aKeyAboveItsRateGets429WithRetryAfter() async throws {
        try await withAPI { client, key, _ in
            // 20 requests at once with a key of 3 a second: however slow the machine, no more than
            // 3 + 3 × (seconds elapsed) are let through, the rest are 429 with Retry-After.
            let path = "/v1/apps/\(Self.app)/customers/nobody"
            let started = ContinuousClock.now
            let responses = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let response = try await Self.get(client, path, key: key)
                        return (response.status, response.headers[.retryAfter])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let elapsed = ContinuousClock.now - started
            let granted = responses.filter { $0.0 == .notFound }.count
            let limited = responses.filter { $0.0 == .tooManyRequests }
            #expect(granted + limited.count == 20, "only 404 (nobody) and 429: \(responses.map(\.0))")
            #expect(
                Double(granted) <= 3 + 3 * (Double(elapsed.components.seconds) + 1), "\(granted) granted in \(elapsed)")
            #expect(
                !limited.isEmpty && limited.allSatisfy { $0.1.flatMap(Int.init).map { $0 >= 1 } == true },
                "429s say when to retry")
        }
    }

    @Test func aTokenIsCheckedAgainstItsStoredKeyWithoutIO() throws {
        let now = Date()
        let key = APIKey(keyId: "0123456789abcdef", bundleId: Self.app, label: "", ratePerSecond: 1, createdAt: now)
        let hash = Array(SHA256.hash(data: Data("secret".utf8)))
        let token = "ck_0123456789abcdef_secret"
        #expect(APIKeyStore.check(token, against: (key, hash), now: now) == .success(key))
        #expect(
            APIKeyStore.check("ck_0123456789abcdef_other", against: (key, hash), now: now) == .failure(.wrongSecret))
        #expect(APIKeyStore.check(token, against: nil, now: now) == .failure(.unknown))
        #expect(APIKeyStore.check("ck_nope", against: (key, hash), now: now) == .failure(.malformed))
        var revoked = key
        revoked.revokedAt = now
        #expect(APIKeyStore.check(token, against: (revoked, hash), now: now) == .failure(.revoked))
        var expired = key
        expired.expiresAt = now.addingTimeInterval(-1)
        #expect(APIKeyStore.check(token, against: (expired, hash), now: now) == .failure(.expired))
    }

    @Test func theRateLimiterRefillsOverTime() async {
        let limiter = KeyedRateLimiter()
        let start = ContinuousClock.now
        #expect(limiter.take(keyId: "k", ratePerSecond: 2, now: start) == nil)
        #expect(limiter.take(keyId: "k", ratePerSecond: 2, now: start) == nil)
        let wait = limiter.take(keyId: "k", ratePerSecond: 2, now: start)
        #expect(wait.map { abs($0 - 0.5) < 0.01 } == true, "half a second for the next token at 2/s")
        #expect(limiter.take(keyId: "k", ratePerSecond: 2, now: start + .milliseconds(600)) == nil)
        #expect(limiter.take(keyId: "other", ratePerSecond: 2, now: start) == nil, "each key has its own bucket")
    }

    @Test func bodyStringsAreValidJSONWhateverTheirCharacters() throws {
        for text in ["plain", "quote \" and backslash \\", "new\nline\ttab\r", "control \u{01}\u{1F}", "é 日本 🎉", ""] {
            let literal = JSONText.quoted(text)
            #expect(try JSONDecoder().decode(String.self, from: Data(literal.utf8)) == text, "\(literal)")
        }
        #expect(Hex.encode([0x00, 0x0f, 0xa5, 0xff]) == "000fa5ff")
    }

    /// Answer times are recorded per route pattern (never the concrete path: customer ids stay out of the labels)
    /// and method, in `customer_api_request_duration_seconds`, the histogram behind the look-up latency alert.
    @Test func answerTimesAreRecordedPerRoutePattern() async throws {
        let metrics = Mutex("")
        try await self.withAPIAndDeadKeys { client, key, _, _, _ in
            for _ in 0..<3 {
                let path = "/v1/apps/\(Self.app)/customers/\(Self.token)?idType=appAccountToken"
                let response = try await Self.get(client, path, key: key)
                #expect(response.status == .ok)
            }
            let unmatched = try await Self.get(client, "/nowhere", key: key)
            #expect(unmatched.status == .notFound)
            let text = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            metrics.withLock { $0 = text }
        }
        let text = metrics.withLock { $0 }
        let route = "route=\"/v1/apps/{bundleId}/customers/{customer}\""
        let count = text.split(separator: "\n").first {
            $0.hasPrefix("customer_api_request_duration_seconds_count{") && $0.contains(route)
                && $0.contains("method=\"GET\"")
        }
        #expect(count?.hasSuffix(" 3") == true, "\(text)")
        #expect(text.contains("route=\"NotFound\""), "Hummingbird names paths no route takes NotFound")
        #expect(!text.contains(Self.token), "a customer id in a label")
    }
}

/// Whether the flood's senders go on.
final class FloodFlag: Sendable {
    private let on = Mutex(true)
    var isOn: Bool { self.on.withLock { $0 } }
    func stop() { self.on.withLock { $0 = false } }
}

extension String {
    /// The string with zeros in front up to `width` characters.
    fileprivate func leftPadded(_ width: Int) -> String {
        String(repeating: "0", count: max(0, width - self.count)) + self
    }
}
