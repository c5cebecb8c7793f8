import AppStoreAPI
import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import RdKafka
import ServiceRuntime
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// The support side against the running stack (the six service binaries, Tansu, PostgreSQL, the sim): consumption
/// requests answered within their deadline when the customer consented, reported when their window had closed,
/// never answered without consent; Look Up Order ID, Get Refund History, Get Transaction Info, a renewal-date
/// extension and a mass extension through customer-api's admin routes and `iapctl support`; a DLQ record shown
/// and replayed; and the support console in a real headless browser, searched for a customer of the sim.
@Suite(.heavy, .tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(10))) struct SupportEndToEndTests {
    static var logger: Logger {
        var logger = Logger(label: "support-end-to-end")
        logger.logLevel = .error
        return logger
    }

    @Test func consumptionAnswersLookupsExtensionsAndTheConsoleAgainstTheRunningStack() async throws {
        try LocalComponents.requireModernLibrdkafka()
        let ingestPort = try LocalComponents.freePortBelowEphemeralRange()
        try await withLocalBroker { bootstrap in
            try await withLocalPostgres { databaseURL in
                try await SimHarness.with(
                    customers: 80, seed: 71,
                    configure: {
                        $0.retryDelays = [.seconds(2), .seconds(4)]
                        $0.openRefundRequestShare = 0.3
                        $0.consentShare = 0.5
                        $0.ingestURL = "http://127.0.0.1:\(ingestPort)/notifications"
                    }
                ) { sim in
                    let logger = Self.logger
                    let topics = PipelineTopics()
                    try await KafkaTestClient(bootstrapServers: [bootstrap]).createTopics(topics.all.map { ($0, 2) })
                    let database = try DatabaseSettings(url: databaseURL)
                    let scenario = sim.simulator.scenario
                    let ownerOf = Dictionary(
                        scenario.purchases.values.flatMap { p in p.transactions.map { ($0.transactionId!, p) } }
                    ) { a, _ in a }
                    // The app records consent (through customer-api) for the customers the sim chose; one says no.
                    let open = scenario.openRefundRequests.sorted()
                    #expect(open.count >= 10, "the sim opened refund requests: \(open.count)")
                    let consenting = Set(sim.simulator.consentingRefundRequests)
                    #expect(!consenting.isEmpty && consenting.count < open.count)
                    let refusing = open.first { !consenting.contains($0) }
                    let (adminKey, appKey) = try await DatabaseClient.with(database, logger: logger) { client in
                        try await MigrationRunner().migrate(client: client, logger: logger)
                        let store = APIKeyStore(client: client, logger: logger)
                        return (
                            try await store.create(bundleId: sim.app.bundleId, ratePerSecond: 1000, role: "admin")
                                .token,
                            try await store.create(bundleId: sim.app.bundleId, ratePerSecond: 1000).token
                        )
                    }
                    let directory = try LocalComponents.temporaryDirectory("support")
                    var environment = try sim.environment(directory: directory, bootstrap: bootstrap)
                    environment.merge([
                        "DATABASE_URL": databaseURL, "LOG_LEVEL": "warning", "KAFKA_SESSION_TIMEOUT_MS": "6000",
                        "RESOLVER_RATE_PER_SECOND": "50",
                        "RESOLVER_RETRY_BASE_MS": "200", "RESOLVER_RETRY_MAX_MS": "2000",
                        "CONSUMPTION_POLICY": "refundPreference=DECLINE,sampleContentProvided=false",
                        "CONSUMPTION_WATCH_INTERVAL_MS": "500",
                        // The support routes and the console on a listener of their own, as the manifests run them.
                        "CUSTOMER_API_ADMIN_PORT": String(try LocalComponents.freePortBelowEphemeralRange()),
                    ]) { _, new in new }
                    let fleet = try ServiceFleet(
                        environment: environment, directory: directory, ports: ["ingest": ingestPort])
                    try await fleet.whileRunning(http: sim.http) {
                        let customerAPI = await fleet.customerAPIURL
                        let consents = await sim.simulator.postConsents(http: sim.http, to: customerAPI, key: appKey)
                        #expect(
                            consents == [200: consenting.count], "every consent stored before delivery: \(consents)")
                        if let refusing {
                            let (status, _) = try await Self.putFacts(
                                customerAPI, app: sim.app.bundleId, key: appKey, customer: ownerOf[refusing]!.customer,
                                kind: ownerOf[refusing]!.customerKind, body: #"{"customerConsented":false}"#)
                            #expect(status == 200)
                        }
                        let (badStatus, bad) = try await Self.putFacts(
                            customerAPI, app: sim.app.bundleId, key: appKey, customer: "someone",
                            body: #"{"customerConsented":true,"consumptionPercentage":100001}"#)
                        #expect(
                            badStatus == 400 && bad.contains("bad-consumption-facts"),
                            "facts out of Apple's ranges are refused")
                        let ingest = await fleet.ingestURL
                        let plan = sim.simulator.deliveryPlan()
                        _ = await sim.simulator.deliver(plan, http: sim.http, to: ingest)
                        await sim.simulator.retryUndelivered(http: sim.http, to: ingest)
                        let api = Admin(
                            base: await fleet.customerAPIAdminURL, app: sim.app.bundleId, key: adminKey, http: sim.http)
                        try await Self.checkAdminListenerOnly(
                            exposed: Admin(base: customerAPI, app: sim.app.bundleId, key: adminKey, http: sim.http),
                            admin: api)
                        try await Self.checkConsumption(
                            sim, database: database, open: open, consenting: consenting, refusing: refusing)
                        // Every repeated delivery is counted on its notification's log row (the console's "duplicates").
                        let repeats = plan.count - Set(plan.map(\.uuid)).count
                        let counted = try await DatabaseClient.with(database, logger: logger) { client in
                            var total = 0
                            for try await value in try await client.query(
                                "SELECT COALESCE(sum(duplicates), 0)::bigint FROM notification_log",
                                logger: logger
                            ).decode(Int64.self) { total = Int(value) }
                            return total
                        }
                        #expect(
                            repeats > 0 && counted >= repeats,
                            "duplicates counted: \(counted) for \(repeats) repeated deliveries")
                        try await Self.checkLookups(
                            sim, api: api, appKey: appKey, ownerOf: ownerOf, environment: environment)
                        try await Self.checkExtensions(sim, api: api, database: database)
                        try await Self.checkDeadLetterAndConsole(
                            sim, api: api, database: database, bootstrap: bootstrap, topics: topics,
                            customer: ownerOf[open.first { consenting.contains($0) }!]!)
                        try await Self.checkResync(sim, api: api, database: database)
                        try await fleet.expectTopicAccessAsTheTableSays(
                            http: sim.http, run: "support: consumption answers, console replays, resync")
                    }
                }
            }
        }
    }

    // MARK: Resync

    /// The console's resync of a subscriber: their purchases re-imported, and one status request per subscription
    /// (customer-api's key may not write status snapshots) that refund-resolver answers with a snapshot the updater
    /// applies.
    static func checkResync(_ sim: SimHarness, api: Admin, database: DatabaseSettings) async throws {
        let logger = Self.logger
        // A Production subscriber the pipeline stores (the console finds them).
        var found: SimPurchase?
        for candidate in sim.simulator.scenario.purchases.values.sorted(by: {
            $0.originalTransactionId < $1.originalTransactionId
        }) where candidate.productType == .autoRenewableSubscription && candidate.environment == .production {
            let (status, view) = try await api.get("/support/\(candidate.customer)")
            if status == 200, !(view["subscriptions"] as? [Any] ?? []).isEmpty {
                found = candidate
                break
            }
        }
        let subscriber = try #require(found, "a stored Production subscriber")
        let (status, answer) = try await api.post("/customers/\(subscriber.customer)/resync", [:])
        #expect(status == 202, "\(answer)")
        let statuses = Int(answer["statuses"] as? String ?? "") ?? 0
        let transactions = Int(answer["transactions"] as? String ?? "") ?? 0
        #expect(
            statuses >= 1 && transactions >= 1,
            "purchases re-imported and a status request per subscription: \(answer)")
        let applied = try await pollUntil(within: .seconds(60), longestPause: .milliseconds(500)) {
            try await DatabaseClient.with(database, logger: logger) { client in
                var count = 0
                for try await value in try await client.query(
                    """
                    SELECT count(*)::bigint FROM notification_log
                    WHERE notification_uuid LIKE 'status-snapshot:resync:%' AND subject = \(subscriber.originalTransactionId)
                    """, logger: logger
                ).decode(Int64.self) { count = Int(value) }
                return count > 0 ? count : nil
            }
        }
        #expect(
            applied != nil, "refund-resolver answered the console's status request with a snapshot the updater logged")
    }

    // MARK: Consumption requests

    /// Every CONSUMPTION_REQUEST is recorded once per transaction; open ones with consent are answered (the sim got
    /// the body), open ones without consent are not, and the old ones (their window closed long ago) are `late`.
    static func checkConsumption(
        _ sim: SimHarness, database: DatabaseSettings, open: [String], consenting: Set<String>, refusing: String?
    ) async throws {
        let logger = Self.logger
        let requested = Set(
            sim.simulator.scenario.notifications.filter { $0.type == "CONSUMPTION_REQUEST" }.compactMap {
                $0.transaction?.transactionId
            })
        var rows: [String: (String, Int)] = [:]
        try await Polling.until(looks: 240, every: .milliseconds(500)) {
            rows = try await DatabaseClient.with(database, logger: logger) { client in
                var rows: [String: (String, Int)] = [:]
                for try await (id, status, times) in try await client.query(
                    "SELECT transaction_id, status, times_requested FROM consumption_requests", logger: logger
                ).decode((String, String, Int32).self) {
                    rows[id] = (status, Int(times))
                }
                return rows
            }
            return Set(rows.keys) == requested && !rows.values.contains(where: { $0.0 == "pending" })
        }
        #expect(Set(rows.keys) == requested, "one row per requested transaction: \(rows.count) of \(requested.count)")
        let answers = await sim.simulator.store.consumptionAnswers
        let answered = Set(answers.map(\.transactionId))
        // Assigned purchases (API 1.22) take no consumption information: recorded not-supported, nothing sent to Apple.
        let assigned = Set(
            sim.simulator.scenario.purchases.values.filter { $0.transactions.first?.inAppOwnershipType == .assigned }
                .flatMap { $0.transactions.compactMap(\.transactionId) })
        for id in open {
            let status = rows[id]?.0
            if assigned.contains(id) {
                #expect(status == "not-supported", "open request \(id) of an assigned purchase: \(status ?? "none")")
                #expect(!answered.contains(id), "no answer for the assigned purchase \(id)")
            } else if consenting.contains(id) {
                #expect(status == "sent", "open request \(id) with consent: \(status ?? "none")")
                #expect(answered.contains(id), "the sim received the answer for \(id)")
            } else {
                #expect(status == "not-consented", "open request \(id) without consent: \(status ?? "none")")
                #expect(!answered.contains(id), "no answer without consent for \(id)")
            }
        }
        if let refusing, !assigned.contains(refusing) { #expect(rows[refusing]?.0 == "not-consented") }
        let old = requested.subtracting(open)
        #expect(!old.isEmpty)
        for id in old {
            #expect(
                rows[id]?.0 == "late",
                "a request whose window had closed is reported late: \(id) \(rows[id]?.0 ?? "none")")
            #expect(!answered.contains(id))
        }
        let answerable = Set(consenting).subtracting(assigned)
        #expect(
            answers.count == answerable.count,
            "each consented request answered once: \(answers.count) answers, \(answerable.count) consented")
        for answer in answers {
            let body = try JSONDecoder().decode(ConsumptionRequest.self, from: Data(answer.body.utf8))
            #expect(
                answer.version == "v2" && body.customerConsented && body.refundPreference == "DECLINE"
                    && body.deliveryStatus == "DELIVERED"
                    && !body.sampleContentProvided)
        }
        print(
            "support: consumption requests \(rows.count): \(Dictionary(grouping: rows.values, by: \.0).mapValues(\.count)), answers \(answers.count)"
        )
    }

    // MARK: Look-ups

    /// The support routes and the console answer on the admin listener only: the public port, which apps reach,
    /// does not know them (404), even with an admin key.
    static func checkAdminListenerOnly(exposed: Admin, admin: Admin) async throws {
        let (publicStatus, _) = try await exposed.get("/support/anyone")
        let (adminStatus, _) = try await admin.get("/support/anyone")
        #expect(publicStatus == 404 && adminStatus != 404, "support view: public \(publicStatus), admin \(adminStatus)")
        for path in ["/console", "/console.js"] {
            let onPublic = try await exposed.http.execute(
                HTTPClientRequest(url: exposed.base + path), timeout: .minutes(1))
            let onAdmin = try await admin.http.execute(HTTPClientRequest(url: admin.base + path), timeout: .minutes(1))
            #expect(
                onPublic.status == .notFound && onAdmin.status == .ok,
                "\(path): public \(onPublic.status), admin \(onAdmin.status)")
        }
    }

    /// Look Up Order ID, Get Refund History and Get Transaction Info through the admin routes and `iapctl support`.
    static func checkLookups(
        _ sim: SimHarness, api: Admin, appKey: String, ownerOf: [String: SimPurchase], environment: [String: String]
    ) async throws {
        let purchases = sim.simulator.scenario.purchases.values.sorted {
            $0.originalTransactionId < $1.originalTransactionId
        }
        // An app key is refused on the support routes.
        let (refusedStatus, refused) = try await api.get(
            "/transactions/\(purchases[0].originalTransactionId)", key: appKey)
        #expect(refusedStatus == 403 && refused["error"] as? String == "admin-only")

        let transaction = purchases[1].transactions.last!
        let orderId = SimOrders.orderId(for: transaction.transactionId!)
        let (orderStatus, order) = try await api.get("/orders/\(orderId)")
        #expect(orderStatus == 200)
        #expect(
            (order["transactions"] as? [[String: Any]])?.compactMap { $0["transactionId"] as? String } == [
                transaction.transactionId!
            ])
        let (unknownStatus, unknown) = try await api.get("/orders/MZZZZZZZZZ")
        #expect(unknownStatus == 404 && unknown["error"] as? String == "unknown-order")

        let refundedOwner = try #require(purchases.first { p in p.transactions.contains { $0.revocationDate != nil } })
        let expectedRefunds = Set(
            sim.simulator.scenario.purchases.values.filter {
                $0.customer == refundedOwner.customer && $0.environment == .production
            }
            .flatMap(\.transactions).filter { $0.revocationDate != nil }.map(\.transactionId!))
        let (refundStatus, refunds) = try await api.get("/refunds/\(refundedOwner.transactions[0].transactionId!)")
        #expect(refundStatus == 200)
        #expect(
            Set((refunds["transactions"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String })
                == expectedRefunds)

        let (infoStatus, info) = try await api.get("/transactions/\(transaction.transactionId!)")
        #expect(
            infoStatus == 200
                && (info["transactions"] as? [[String: Any]])?.first?["productId"] as? String == transaction.productId)
        let (missingStatus, _) = try await api.get("/transactions/1999999")
        #expect(missingStatus == 404)

        // The same look-up with the iapctl binary, as an operator would.
        let (code, output) = try await IAPCtlProcess.run(
            ["support", "lookup-order", orderId], environment: environment)
        #expect(
            code == 0 && output.contains("\"transactionId\":\"\(transaction.transactionId!)\""),
            "iapctl support lookup-order: \(output)")
        let (refundCode, refundOutput) = try await IAPCtlProcess.run(
            ["support", "refund-history", refundedOwner.transactions[0].transactionId!],
            environment: environment)
        #expect(
            refundCode == 0 && refundOutput.contains("\(expectedRefunds.count) refunded transaction(s) in Production"),
            "iapctl: \(refundOutput)")
        let (badCode, _) = try await IAPCtlProcess.run(
            ["support", "extend-renewal", "--original-transaction-id", "1", "--days", "0"], environment: environment)
        #expect(badCode == 2, "days outside 1…90 are a usage error")
    }

    // MARK: Extensions

    /// `PUT …/consumption-facts` as the app does; the status and the body text.
    static func putFacts(
        _ base: String, app: String, key: String, customer: String, kind: String = "appUserId", body: String
    ) async throws -> (Int, String) {
        var request = HTTPClientRequest(
            url: base + "/v1/apps/\(app)/customers/\(customer)/consumption-facts?idType=\(kind)")
        request.method = .PUT
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        defer { _ = client.shutdown() }
        let response = try await client.execute(request, timeout: .seconds(30))
        return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    /// customer-api's admin routes of one app.
    struct Admin: Sendable {
        let base: String
        let app: String
        let key: String
        let http: HTTPClient

        func get(_ path: String, key: String? = nil) async throws -> (Int, [String: Any]) {
            try await self.send(.GET, path, body: nil, key: key)
        }

        func post(_ path: String, _ body: [String: Any]) async throws -> (Int, [String: Any]) {
            try await self.send(.POST, path, body: try JSONSerialization.data(withJSONObject: body), key: nil)
        }

        private func send(_ method: HTTPMethod, _ path: String, body: Data?, key: String?) async throws -> (
            Int, [String: Any]
        ) {
            var request = HTTPClientRequest(url: self.base + "/v1/admin/apps/\(self.app)" + path)
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer \(key ?? self.key)")
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: body))
            }
            let response = try await self.http.execute(request, timeout: .seconds(60))
            let bytes = try await response.body.collect(upTo: 1 << 22)
            let json = (try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView))) as? [String: Any] ?? [:]
            return (Int(response.status.code), json)
        }
    }
}
