import AppStoreAPI
import AppStoreModels
import AppStoreSigning
@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Crypto
import Entitlements
import Foundation
import JWSVerification
import Logging
import NIOCore
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import Prometheus
import RdKafka
import ServiceLifecycle
import ServiceRuntime
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// customer-api's POST of purchases against real components: the sim's App Store (signed transactions,
/// Get Transaction Info and History), the real broker, PostgreSQL and the entitlement-updater, both services as
/// processes of their binaries. Each input
/// kind binds the purchase to the app user and answers the user's entitlements once committed; ownership
/// conflicts answer 409 and change nothing; every bad input is a 4xx JSON error that writes nothing.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(4))) struct CustomerAPIPurchaseTests {
    static var logger: Logger {
        var logger = Logger(label: "customer-api-purchases")
        logger.logLevel = .error
        return logger
    }

    /// What a test gets: the sim, customer-api's port, a key of the sim's app, the database URL.
    struct Stack: Sendable {
        let sim: SimHarness
        let port: Int
        let key: String
        /// A key of another app the service accepts.
        let otherKey: String
        let databaseURL: String
        var app: String { self.sim.app.bundleId }
        static let otherApp = "com.example.other"

        /// A POST of `body` (JSON text) for `user` (of `app`, default the sim's); the status and the JSON body.
        func post(_ user: String, _ body: String, key: String? = nil, app: String? = nil) async throws -> (
            Int, [String: Any]
        ) {
            var request = HTTPClientRequest(
                url: "http://127.0.0.1:\(self.port)/v1/apps/\(app ?? self.app)/customers/\(user)/transactions")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(key ?? self.key)")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
            // Longer than any apply wait a stack runs with: the service answers (200, or 202 when its wait passed)
            // before the client gives up, never the two at once.
            let response = try await self.sim.http.execute(request, timeout: .minutes(2))
            let bytes = try await response.body.collect(upTo: 1 << 22)
            let json = (try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView))) as? [String: Any] ?? [:]
            return (Int(response.status.code), json)
        }

        /// `body` (a JSON object) with the buyer's device's proof added: `AppTransaction.shared` as StoreKit signs it now
        /// for the device `device`, and that device's verification id.
        func proven(_ body: String, by purchase: SimPurchase, device: String = "4F7C0E2A-9B1D-4C3E-8A5F-6D2B7E9C1A04")
            throws -> String
        {
            let app = try self.sim.simulator.signer.signAppTransaction(
                for: purchase, environment: purchase.environment, device: device)
            return body.dropLast() + #","signedAppTransaction":""# + app + #"","deviceVerificationId":""# + device
                + #""}"#
        }

        /// Declares the appAccountToken of `purchase` (if it has one) as `user`'s; the HTTP status (0: no token).
        @discardableResult
        func declareToken(of purchase: SimPurchase, for user: String) async throws -> Int {
            guard let token = purchase.transactions.last?.appAccountToken else { return 0 }
            var request = HTTPClientRequest(
                url: "http://127.0.0.1:\(self.port)/v1/apps/\(self.app)/customers/\(user)/account-tokens")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(self.key)")
            request.body = .bytes(
                ByteBuffer(
                    string: #"{"appAccountToken":""# + token + #"","environment":""# + purchase.environment.rawValue
                        + #""}"#))
            return Int(try await self.sim.http.execute(request, timeout: .seconds(30)).status.code)
        }

        /// The status of a GET of `user` with `key` in `app`.
        func getStatus(_ user: String, key: String, app: String) async throws -> Int {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(self.port)/v1/apps/\(app)/customers/\(user)")
            request.headers.add(name: "Authorization", value: "Bearer \(key)")
            return Int(try await self.sim.http.execute(request, timeout: .seconds(30)).status.code)
        }

        /// The app user's active entitlements through GET, in every environment (product ids).
        func activeProducts(_ user: String) async throws -> [String] {
            var request = HTTPClientRequest(
                url: "http://127.0.0.1:\(self.port)/v1/apps/\(self.app)/customers/\(user)?environment=all")
            request.headers.add(name: "Authorization", value: "Bearer \(self.key)")
            let response = try await self.sim.http.execute(request, timeout: .seconds(30))
            let bytes = try await response.body.collect(upTo: 1 << 22)
            guard response.status == .ok,
                let json = try JSONSerialization.jsonObject(with: Data(bytes.readableBytesView)) as? [String: Any],
                let entitlements = json["entitlements"] as? [[String: Any]]
            else { return [] }
            return entitlements.filter { $0["active"] as? Bool == true }.compactMap { $0["productId"] as? String }
                .sorted()
        }

        /// How many app purchases the notification log holds, and the bindings table.
        func written() async throws -> (purchases: Int, bindings: [String: String]) {
            let logger = CustomerAPIPurchaseTests.logger
            return try await DatabaseClient.with(try DatabaseSettings(url: self.databaseURL), logger: logger) {
                client in
                var purchases = 0
                for try await count in try await client.query(
                    "SELECT count(*) FROM notification_log WHERE notification_type = 'APP_PURCHASE'", logger: logger
                ).decode(Int.self) { purchases = count }
                var bindings: [String: String] = [:]
                for try await (original, user) in try await client.query(
                    "SELECT original_transaction_id, app_user_id FROM customer_bindings", logger: logger
                ).decode((String, String).self) {
                    bindings[original] = user
                }
                return (purchases, bindings)
            }
        }
    }

    /// Runs `body` with the sim, broker, PostgreSQL, the updater and customer-api (policy `policy`, wait `wait`).
    static func withStack(
        policy: AppPurchaseRecord.ConflictPolicy = .refuse, wait: Duration = .seconds(30), maximumBody: Int = 64 * 1024,
        runUpdater: Bool = true, keyConcurrency: Int? = nil, _ body: @Sendable (Stack) async throws -> Void
    ) async throws {
        try LocalComponents.requireModernLibrdkafka()
        try await withLocalBroker { bootstrap in
            try await withLocalPostgres { url in
                try await SimHarness.with(customers: 40, seed: 11) { sim in
                    let logger = Self.logger
                    let topics = PipelineTopics()
                    try await KafkaTestClient(bootstrapServers: [bootstrap]).createTopics(topics.all.map { ($0, 2) })
                    let database = try DatabaseSettings(url: url)
                    let (key, otherKey) = try await DatabaseClient.with(database, logger: logger) { client in
                        try await MigrationRunner().migrate(client: client, logger: logger)
                        let store = APIKeyStore(client: client, logger: logger)
                        return (
                            try await store.create(bundleId: sim.app.bundleId, ratePerSecond: 1000).token,
                            try await store.create(bundleId: Stack.otherApp, ratePerSecond: 1000).token
                        )
                    }
                    // customer-api (and the updater) as processes of their binaries, as they run in a cluster.
                    let directory = try LocalComponents.temporaryDirectory("customer-api-purchases")
                    var environment = try sim.environment(directory: directory, bootstrap: bootstrap)
                    environment.merge([
                        "DATABASE_URL": url, "LOG_LEVEL": "warning", "KAFKA_SESSION_TIMEOUT_MS": "6000",
                        "APPSTORE_APPS": "\(sim.app.bundleId):\(sim.app.appAppleId!),\(Stack.otherApp):99",
                        "APPSTORE_API_SANDBOX_FALLBACK": "true", "CUSTOMER_TRANSFER_POLICY": policy.rawValue,
                        "CUSTOMER_API_APPLY_WAIT_MS": String(Int(wait / .milliseconds(1))),
                        "CUSTOMER_API_MAX_BODY_BYTES": String(maximumBody),
                        "CUSTOMER_API_KEY_CONCURRENCY": keyConcurrency.map(String.init) ?? "",
                    ]) { _, new in new }
                    let fleet = try ServiceFleet(
                        environment: environment, directory: directory,
                        only: runUpdater ? ["customer-api", "entitlement-updater"] : ["customer-api"])
                    try await fleet.whileRunning(http: sim.http) {
                        let port = await fleet.ports["customer-api"]!
                        // The first post's wait must not include the updater's group join: on a loaded machine that
                        // join once outlasted the wait.
                        if runUpdater {
                            try await fleet.waitUntilAssigned(
                                "entitlement-updater", group: "entitlement-updater", partitions: 2, http: sim.http)
                        }
                        try await body(Stack(sim: sim, port: port, key: key, otherKey: otherKey, databaseURL: url))
                    }
                }
            }
        }
    }

    /// The sim's purchases of a kind that end active and unrevoked, in a stable order.
    static func activePurchases(_ sim: SimHarness, _ type: ProductType) -> [SimPurchase] {
        let expected = Set(
            sim.simulator.scenario.expected.filter { $0.active && !$0.revoked }.map(\.originalTransactionId))
        return sim.simulator.scenario.purchases.values
            .filter { $0.productType == type && expected.contains($0.originalTransactionId) }
            .sorted { $0.originalTransactionId < $1.originalTransactionId }
    }

    @Test func eachInputKindBindsThePurchaseAndAnswersTheUsersEntitlements() async throws {
        try await Self.withStack { stack in
            let subscriptions = Self.activePurchases(stack.sim, .autoRenewableSubscription)
            try #require(subscriptions.count >= 3, "the scenario has active subscriptions")
            // 1. StoreKit 2's signed transaction, verified like a notification's nested JWS.
            let first = subscriptions[0]
            for (purchase, user) in zip(subscriptions, ["user-a", "user-b", "user-c"]) {
                try await stack.declareToken(of: purchase, for: user)
            }
            let signed = try stack.sim.simulator.signer.signTransaction(first.transactions.last!)
            // Each post carries the buyer's device's proof (a fresh AppTransaction of the buyer's account): a purchase
            // nobody owns yet is bound on nothing less.
            let (status, body) = try await stack.post(
                "user-a", try stack.proven(#"{"signedTransaction":""# + signed + #""}"#, by: first))
            #expect(status == 200, "\(body)")
            #expect(body["customer"] as? String == "user-a" && body["requestId"] is String)
            #expect(try await stack.activeProducts("user-a") == [first.productId])
            // 2. A transaction id of its first period, looked up with Get Transaction Info (Production first), then its history.
            let second = subscriptions[1]
            let (idStatus, idBody) = try await stack.post(
                "user-b",
                try stack.proven(
                    #"{"transactionId":""# + second.transactions.first!.transactionId! + #""}"#, by: second))
            #expect(idStatus == 200, "\(idBody)")
            #expect(
                try await stack.activeProducts("user-b") == [second.productId],
                "the newest period decides, whatever id was posted")
            // 3. A StoreKit 1 receipt: its ids, then Get Transaction History, every page.
            let third = subscriptions[2]
            let receipt = SimHarness.legacyReceipt(third.transactions.first!.transactionId!)
            let (receiptStatus, receiptBody) = try await stack.post(
                "user-c", try stack.proven(#"{"appReceipt":""# + receipt + #""}"#, by: third))
            #expect(receiptStatus == 200, "\(receiptBody)")
            #expect(try await stack.activeProducts("user-c") == [third.productId])
            let written = try await stack.written()
            #expect(
                written.bindings == [
                    first.originalTransactionId: "user-a", second.originalTransactionId: "user-b",
                    third.originalTransactionId: "user-c",
                ])
            #expect(
                written.purchases == 1 + second.transactions.count + third.transactions.count,
                "one record per transaction of a subscription's history")
            // Posting the same purchase again for the same user is harmless.
            let (again, _) = try await stack.post("user-a", #"{"signedTransaction":""# + signed + #""}"#)
            #expect(again == 200)

            // Another user claims user-a's purchase: 409 under `refuse`, nothing moves.
            let (conflict, conflictBody) = try await stack.post("user-z", #"{"signedTransaction":""# + signed + #""}"#)
            #expect(
                conflict == 409 && conflictBody["error"] as? String == "owned-by-another-customer", "\(conflictBody)")
            #expect(try await stack.activeProducts("user-a") == [first.productId])
            #expect(try await stack.activeProducts("user-z") == [])
            #expect(try await stack.written().bindings[first.originalTransactionId] == "user-a")
        }
    }

    @Test func badInputsAre4xxJSONErrorsThatWriteNothing() async throws {
        try await Self.withStack(maximumBody: 4096) { stack in
            let purchase = try #require(Self.activePurchases(stack.sim, .autoRenewableSubscription).first)
            let transaction = purchase.transactions.last!
            let forger = AppStoreSigner(pki: try TestPKI())
            let forged = try forger.sign(transaction)
            let cases: [(String, String, Int, String)] = [
                ("user-1", "not json", 400, "bad-body"),
                ("user-1", "{}", 400, "bad-body"),
                ("user-1", #"{"transactionId":"1","appReceipt":"x"}"#, 400, "bad-body"),
                ("user-1", #"{"signedTransaction":"a.b.c"}"#, 400, "invalid-signed-transaction"),
                ("user-1", #"{"signedTransaction":""# + forged + #""}"#, 400, "invalid-signed-transaction"),
                ("user-1", #"{"transactionId":"99999999999"}"#, 404, "unknown-transaction"),
                ("user-1", #"{"transactionId":"1; DROP TABLE"}"#, 400, "bad-transaction-id"),
                ("user-1", #"{"appReceipt":"%%%"}"#, 400, "bad-receipt"),
                ("user-1", #"{"transactionId":"1","environment":"Xcode"}"#, 400, "bad-environment"),
                ("user-1", #"{"appReceipt":""# + String(repeating: "A", count: 8192) + #""}"#, 413, "body-too-large"),
                (String(repeating: "u", count: 129), #"{"transactionId":"1"}"#, 400, "bad-app-user-id"),
            ]
            for (user, body, status, code) in cases {
                let (answered, json) = try await stack.post(user, body)
                #expect(
                    answered == status && json["error"] as? String == code, "\(body.prefix(60)): \(answered) \(json)")
            }
            let (unauthorized, _) = try await stack.post("user-1", #"{"transactionId":"1"}"#, key: "ck_nope_nope")
            #expect(unauthorized == 401)
            let (forbidden, _) = try await stack.post("user-1", #"{"transactionId":"1"}"#, key: stack.otherKey)
            #expect(forbidden == 403, "another app's key")
            // The sim's genuine transaction posted to another app the service accepts.
            let genuine = try stack.sim.simulator.signer.signTransaction(transaction)
            let (wrongApp, wrongAppBody) = try await stack.post(
                "user-1", #"{"signedTransaction":""# + genuine + #""}"#, key: stack.otherKey,
                app: Stack.otherApp)
            #expect(wrongApp == 403 && wrongAppBody["error"] as? String == "wrong-app-transaction", "\(wrongAppBody)")
            // Apple failing: after the client's inline retries, 503 with Retry-After (the app tries again later).
            await stack.sim.setFaults(SimStore.Faults(serverErrors: 100))
            let (unavailable, unavailableBody) = try await stack.post(
                "user-1", #"{"transactionId":""# + transaction.transactionId! + #""}"#)
            #expect(
                unavailable == 503 && unavailableBody["error"] as? String == "app-store-unavailable",
                "\(unavailableBody)")
            await stack.sim.setFaults(SimStore.Faults())
            let written = try await stack.written()
            #expect(written.purchases == 0 && written.bindings.isEmpty, "nothing written")
        }
    }

    /// One key holding its share of the slots (two POSTs waiting for a commit that does not come: no updater
    /// runs) gets 429 `too-many-in-flight` for its next request at once, while another key's requests are served.
    @Test func oneKeyCannotStarveAnother() async throws {
        try await Self.withStack(wait: .seconds(10), runUpdater: false, keyConcurrency: 2) { stack in
            let purchase = try #require(
                Self.activePurchases(stack.sim, .autoRenewableSubscription).first {
                    $0.transactions.last?.appAccountToken == nil
                })
            let body = try stack.proven(
                #"{"signedTransaction":""#
                    + (try stack.sim.simulator.signer.signTransaction(purchase.transactions.last!)) + #""}"#,
                by: purchase)
            // Three posts at once with a share of two: one is refused at once, which proves two hold their slots (for the
            // 10 s apply wait); meanwhile the same key is refused and another key is served.
            try await withThrowingTaskGroup(of: Int.self) { group in
                for user in ["holder-1", "holder-2", "holder-3"] {
                    group.addTask { try await stack.post(user, body).0 }
                }
                let firstAnswer = try await group.next()
                #expect(firstAnswer == 429, "the request past the key's share is refused at once")
                #expect(
                    try await stack.getStatus("nobody", key: stack.key, app: stack.app) == 429,
                    "so is the key's next request")
                #expect(
                    try await stack.getStatus("nobody", key: stack.otherKey, app: Stack.otherApp) == 404,
                    "another key is served meanwhile")
                var rest: [Int] = []
                for try await status in group { rest.append(status) }
                #expect(rest == [202, 202], "the holders are answered in the end: \(rest)")
            }
            #expect(
                try await stack.getStatus("nobody", key: stack.key, app: stack.app) == 404, "the slots are given back")
        }
    }

    @Test func answers202WithWhereToLookWhenTheUpdaterIsSlowerThanTheBound() async throws {
        try await Self.withStack(wait: .milliseconds(300), runUpdater: false) { stack in
            let purchase = try #require(
                Self.activePurchases(stack.sim, .nonConsumable).first
                    ?? Self.activePurchases(stack.sim, .autoRenewableSubscription).first)
            try await stack.declareToken(of: purchase, for: "late-user")
            let signed = try stack.sim.simulator.signer.signTransaction(purchase.transactions.last!)
            let (status, body) = try await stack.post(
                "late-user", try stack.proven(#"{"signedTransaction":""# + signed + #""}"#, by: purchase))
            #expect(status == 202, "\(body)")
            #expect(
                body["location"] as? String == "/v1/apps/\(stack.app)/customers/late-user"
                    && body["requestId"] is String)
        }
    }
}
