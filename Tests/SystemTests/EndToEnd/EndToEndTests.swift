import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import AsyncHTTPClient
import Entitlements
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import RdKafka
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// The product end to end: thousands of customers' life cycles from `appstore-sim`, shuffled and partly
/// duplicated, posted to the real `ingest` binary and carried by the real chain-verifier,
/// entitlement-updater, refund-resolver and event-publisher processes through Tansu and PostgreSQL. The
/// database and the downstream events must end exactly as the sim's own model says; once with every
/// service running throughout, once with each service SIGKILLed and restarted while notifications flow.
@Suite(.heavy, .tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(12))) struct EndToEndTests {
    static var logger: Logger {
        var logger = Logger(label: "end-to-end")
        logger.logLevel = .critical
        return logger
    }

    /// Both ways the sim sends subscription REFUNDs: with `data.status` as Apple does (a refund of an earlier period
    /// arriving before the renewals asks Apple until when), and without it (every one is the resolver's to settle).
    @Test(arguments: RefundStatus.allCases)
    func thousandsOfCustomersEndInTheSimsStateWithNothingLostOrAppliedTwice(refunds: RefundStatus) async throws {
        try await Self.run(customers: 1200, seed: refunds == .carried ? 61 : 65, kills: [], refunds: refunds)
    }

    @Test func everyServiceSIGKILLedAndRestartedMidwayLosesNothing() async throws {
        try await Self.run(
            customers: 1000, seed: 62,
            kills: ["entitlement-updater", "ingest", "chain-verifier", "event-publisher", "refund-resolver"],
            refunds: .withheld)
    }

    @Test func purchasesPostedByTheAppAndLostNotificationsEndInTheSimsStateThroughGET() async throws {
        try await Self.run(customers: 800, seed: 63, kills: [], appSide: true, tracing: true)
    }

    // MARK: The run

    /// Delivers the whole scenario while SIGKILLing `kills` one after another (each restarted at once), then
    /// checks the database and the downstream topics against the sim; subscription REFUNDs carry `data.status` or
    /// not as `refunds` says, and every refund-like notification has exactly one revocation event. With `appSide`, 30 % of the customers
    /// without an appAccountToken post their purchase from the app to customer-api first (half of them instead
    /// of the purchase notification), 15 % of DID_RENEW and EXPIRED notifications are lost for good (the
    /// renewal-time sweep must make up for them), and every expected entitlement is read back through GET.
    /// With `tracing`, every service exports its spans to a ``TraceCollector`` and one notification's trace is
    /// checked across all of them.
    static func run(
        customers: Int, seed: UInt64, kills: [String], refunds: RefundStatus = .carried, appSide: Bool = false,
        tracing: Bool = false
    ) async throws {
        try await withLocalBroker { bootstrap in
            try await withLocalPostgres { databaseURL in
                try await SimHarness.with(
                    customers: customers, seed: seed,
                    configure: {
                        $0.retryDelays = [.seconds(2), .seconds(4), .seconds(8)]
                        $0.environments = [.production, .sandbox]
                        $0.refundCarriesStatus = refunds == .carried
                        if appSide {
                            $0.appPostShare = 0.3
                            $0.lostShare = 0.15
                            $0.offerPurchaseShare = 0.5
                        }
                    }
                ) { sim in
                    let logger = Self.logger
                    try await KafkaTestClient(bootstrapServers: [bootstrap]).createTopics(
                        PipelineTopics().all.map { ($0, 4) })
                    try await migrateDatabase(try DatabaseSettings(url: databaseURL), logger: logger)
                    let directory = try LocalComponents.temporaryDirectory("end-to-end")
                    var environment = try sim.pipelineEnvironment(
                        directory: directory, bootstrap: bootstrap, databaseURL: databaseURL)
                    if appSide {
                        environment.merge(["RENEWAL_SWEEP_INTERVAL_MS": "1000", "RENEWAL_SWEEP_MARGIN_MS": "0"]) {
                            _, new in new
                        }
                    }
                    let collector = tracing ? try TraceCollector(directory: directory) : nil
                    defer { collector?.stop() }
                    if let collector { environment.merge(collector.environment) { _, new in new } }
                    let fleet = try ServiceFleet(environment: environment, directory: directory)
                    try await fleet.whileRunning(http: sim.http) {
                        let key =
                            appSide ? try await Self.postAppPurchases(sim, fleet: fleet, databaseURL: databaseURL) : nil
                        try await Self.deliver(sim, fleet: fleet, kills: kills)
                        try await Self.check(
                            sim, databaseURL: databaseURL, bootstrap: bootstrap,
                            publisherKilled: kills.contains("event-publisher"))
                        try await fleet.expectTopicAccessAsTheTableSays(
                            http: sim.http, run: "end to end, seed \(seed), refunds \(refunds)")
                        if let key {
                            try await Self.checkThroughGET(sim, fleet: fleet, key: key, databaseURL: databaseURL)
                            try await Self.checkMetrics(sim, fleet: fleet)
                            // Last: it SIGKILLs customer-api once to show a kept cursor survives the restart.
                            try await Self.checkFeed(sim, fleet: fleet, key: key, bootstrap: bootstrap)
                        }
                        if let collector { try await Self.checkTrace(collector, bootstrap: bootstrap) }
                        let feedKills = key == nil ? [] : ["customer-api"]
                        #expect(await fleet.kills == kills + feedKills, "every planned SIGKILL happened")
                    }
                }
            }
        }
    }

    /// The app's side: a key for the sim's app, then every purchase the app posts (each must commit: 200).
    static func postAppPurchases(_ sim: SimHarness, fleet: ServiceFleet, databaseURL: String) async throws -> String {
        let logger = Self.logger
        let key = try await DatabaseClient.with(try DatabaseSettings(url: databaseURL), logger: logger) {
            try await APIKeyStore(client: $0, logger: logger).create(bundleId: sim.app.bundleId, ratePerSecond: 5000)
                .token
        }
        // customer-api reads its keys every CUSTOMER_API_KEY_REFRESH_MS: the new key works within it.
        try await waitUntilCustomerAPIKnows(key: key, baseURL: await fleet.customerAPIURL, http: sim.http)
        let posts = sim.simulator.scenario.appPosts
        #expect(
            posts.count > 20 && sim.simulator.scenario.lost.count > 20,
            "the scenario has app posts and lost notifications")
        let statuses = await sim.simulator.postAppPurchases(http: sim.http, to: await fleet.customerAPIURL, key: key)
        #expect(statuses == [200: posts.count], "every app post committed: \(statuses)")
        // Lapsed subscribers come back with a promotional offer customer-api signs from their stored history.
        let offers = sim.simulator.scenario.offerPurchases
        await sim.simulator.store.setNotificationURL(await fleet.ingestURL)
        let report = await sim.simulator.buyWithOffers(
            http: sim.http, customerAPI: await fleet.customerAPIURL, key: key,
            storeURL: sim.baseURL.absoluteString + "/sim/storekit/purchases")
        #expect(offers.count >= 4, "the scenario has offer purchases")
        #expect(report.failures.isEmpty, "\(report.failures.prefix(3))")
        #expect(report.bought == offers.count && report.forgedRefused == 1)
        #expect(report.signed["V1", default: 0] > 0 && report.signed["V2", default: 0] > 0)
        print(
            "end-to-end offers: \(report.bought) purchases with signed offers (\(report.signed)), 1 altered signature refused"
        )
        return key
    }

    // MARK: Checks

    /// The database equals the sim's expectation, every notification is logged exactly once, and the
    /// downstream events carry the same final states.
    static func check(_ sim: SimHarness, databaseURL: String, bootstrap: String, publisherKilled: Bool) async throws {
        let logger = Self.logger
        let difference = try await PipelineHarness.waitForExpectedState(
            sim, databaseURL: databaseURL, timeout: .seconds(400), logger: logger)
        #expect(
            difference.missing.count == 0,
            "missing: \(difference.missing.count) \(difference.missing.sorted().prefix(5))")
        #expect(
            difference.extra.count == 0, "unexpected: \(difference.extra.count) \(difference.extra.sorted().prefix(5))")

        // Zero lost: every notification of the scenario is in the log; the only others are status snapshots.
        // Notifications that change no entitlement (a failed renewal extension, say) may still be on their way
        // once the state is right, so the log is read until it holds them all or two minutes have passed.
        let scenario = Set(sim.simulator.scenario.notifications.map(\.uuid)).union(
            sim.simulator.scenario.offerPurchases.map(\.notificationUUID))
        let (stored, deadLetters) = try await DatabaseClient.with(
            try DatabaseSettings(url: databaseURL), logger: logger
        ) { client in
            var stored = try await StoredRun.read(client: client, logger: logger)
            try await Polling.until(looks: 240, every: .milliseconds(500)) {
                stored = try await StoredRun.read(client: client, logger: logger)
                return scenario.isSubset(of: stored.logged.keys)
            }
            try await Self.waitForEmptyOutbox(client: client, logger: logger)
            return (
                try await StoredRun.read(client: client, logger: logger),
                try await StoredRun.deadLetters(client: client, logger: logger)
            )
        }
        let lost = scenario.subtracting(stored.logged.keys)
        // A loss names where each lost notification stopped: in no topic (the broker lost what it acknowledged), only
        // raw (the chain-verifier), also verified (the updater).
        let whereLost = await LossLocator.locate(lost, bootstrap: bootstrap)
        #expect(
            lost.count == 0,
            "lost: \(lost.count) \(whereLost.prefix(5)); dead letters: \(deadLetters.prefix(3))")
        let others = stored.logged.filter { !scenario.contains($0.key) }
        #expect(
            others.values.allSatisfy { $0 == "STATUS_SNAPSHOT" || $0 == "APP_PURCHASE" },
            "only snapshots and the app's posts besides Apple's notifications")
        #expect(!others.isEmpty, "refunds were resolved through status calls")

        // Zero applied twice: one event id per (cause, kind, entitlement) in the outbox, each published, and
        // downstream carries exactly the outbox's events (a killed publisher may repeat one, never invent one).
        let topics = PipelineTopics()
        var published: [EntitlementEvent] = []
        for topic in [topics.entitlementChanges, topics.entitlementFamily, topics.entitlementRevocations] {
            let expectedCount = stored.outbox.values.filter { $0 == topic }.count
            let records = try await KafkaTestClient(bootstrapServers: [bootstrap]).readAll(
                topic, atLeast: expectedCount, quiet: .seconds(2), timeout: .seconds(120))
            let events = try records.map {
                try JSONDecoder().decode(EntitlementEvent.self, from: Data($0.value ?? []))
            }
            Self.checkOrder(
                topic: topic, keys: records.map { String(decoding: $0.key ?? [], as: UTF8.self) },
                events: events, written: stored.written)
            published += events
        }
        let publishedIDs = Set(published.map(\.eventId))
        let outboxIDs = Set(stored.outbox.keys.filter { stored.outbox[$0] != topics.statusRequests })
        #expect(
            publishedIDs.symmetricDifference(outboxIDs).count == 0,
            "downstream: \(publishedIDs.subtracting(outboxIDs).count) unknown, \(outboxIDs.subtracting(publishedIDs).count) missing"
        )
        if !publisherKilled { #expect(published.count == publishedIDs.count, "no event published twice") }
        let causes = Set(published.map(\.cause.notificationUUID))
        #expect(causes.subtracting(stored.logged.keys).count == 0, "every event has a logged cause")

        // API 1.22's fields reach consumers: the sim signs a billing plan and the next renewal's price.
        #expect(
            published.contains {
                $0.facts.billingPlanType == "BILLED_UPFRONT" && $0.facts.renewalBillingPlanType == "BILLED_UPFRONT"
                    && $0.facts.renewalPrice == "4.99"
            }, "events carry billingPlanType, renewalBillingPlanType and renewalPrice")
        Self.checkEventsAgainstTheSim(sim, published: published)
        Self.checkSequences(published)
        Self.checkMigrationsAndItemRefunds(sim, published: published)
        try await Self.checkCompleteness(sim, databaseURL: databaseURL)
    }

    /// Events of one subscription reach consumers in the order the updater wrote them: under each record key
    /// (the customer), the first delivery of each event of one subject comes after the first delivery of every
    /// event of that subject written before it (a repeat after a relay crash may follow; it adds nothing new).
    /// Events of different subscriptions of one customer are written by different updater transactions whose
    /// commit order is their order; they are compared only within a subject.
    static func checkOrder(topic: String, keys: [String], events: [EntitlementEvent], written: [String: Int64]) {
        var last: [String: Int64] = [:]
        var seen = Set<String>()
        var reordered: [String] = []
        for (key, event) in zip(keys, events) where seen.insert(event.eventId).inserted {
            guard let position = written[event.eventId] else { continue }
            let stream = "\(key) \(event.subject)"
            if let previous = last[stream], previous > position { reordered.append("\(stream): \(event.eventType)") }
            last[stream] = max(last[stream] ?? position, position)
        }
        #expect(
            reordered.isEmpty, "\(topic): \(reordered.count) events before one written earlier: \(reordered.prefix(3))")
    }

    /// Every subscription the sim migrated to the Advanced Commerce API has exactly one `entitlement.migrated`
    /// event naming the subscription it continues, and every item refund exactly one `revocation.items-refunded`
    /// naming the refunded SKU alone.
    static func checkMigrationsAndItemRefunds(_ sim: SimHarness, published: [EntitlementEvent]) {
        let scenario = sim.simulator.scenario
        let migrations = Dictionary(
            scenario.purchases.values.compactMap { purchase in
                purchase.migratedTo.map { ("\(purchase.environment.rawValue) \($0)", purchase.originalTransactionId) }
            }, uniquingKeysWith: { a, _ in a })
        #expect(!migrations.isEmpty, "the scenario migrates subscriptions")
        // Delivery is at least once (an outage may repeat an event): one event id counts once.
        var migrated: [String: [String]] = [:]
        var seen = Set<String>()
        for event in published where event.eventType == "entitlement.migrated" && seen.insert(event.eventId).inserted {
            migrated["\(event.facts.environment) \(event.subject)", default: []].append(
                event.migration?.previousOriginalTransactionId ?? "")
        }
        #expect(
            migrated == migrations.mapValues { [$0] },
            "one entitlement.migrated per migrated subscription: \(migrated.count) for \(migrations.count)")
        let itemRefunds = scenario.notifications.filter {
            $0.type == "REFUND" && $0.transaction?.advancedCommerceInfo != nil
        }
        #expect(!itemRefunds.isEmpty, "the scenario refunds Advanced Commerce items")
        let events = Dictionary(
            published.filter { $0.eventType == "revocation.items-refunded" }.map { ($0.cause.notificationUUID, $0) },
            uniquingKeysWith: { a, _ in a })
        let wrong = itemRefunds.filter { events[$0.uuid]?.refundedItems?.map(\.sku) != ["extra-storage"] }
        #expect(wrong.isEmpty, "item refunds without their one event: \(wrong.count) of \(itemRefunds.count)")
    }

    /// Every event carries its subject's next number: per environment, app and subject, the distinct events are
    /// numbered 1, 2, … with no gap and no number given twice (a repeat by a killed publisher has its event's number).
    static func checkSequences(_ published: [EntitlementEvent]) {
        var numbers: [String: [Int64: String]] = [:]
        var unnumbered: [String] = []
        var givenTwice: [String] = []
        for event in published {
            guard let number = event.sequence else {
                unnumbered.append(event.eventId)
                continue
            }
            let subject = "\(event.facts.environment)/\(event.facts.bundleId)/\(event.subject)"
            if let other = numbers[subject]?[number], other != event.eventId {
                givenTwice.append("\(subject) #\(number)")
            }
            numbers[subject, default: [:]][number] = event.eventId
        }
        let gapped = numbers.filter { Set($0.value.keys) != Set(1...Int64($0.value.count)) }.map(\.key)
        #expect(unnumbered.isEmpty, "events without a sequence: \(unnumbered.count)")
        #expect(givenTwice.isEmpty, "numbers given twice: \(givenTwice.prefix(3))")
        #expect(gapped.isEmpty, "subjects with a gap: \(gapped.count) of \(numbers.count), e.g. \(gapped.prefix(3))")
        #expect(numbers.values.contains { $0.count > 2 }, "some subject has several events")
    }

    /// Nothing verified is thrown away: every transaction a scenario notification carried is a row (per
    /// environment) with its newest revocation state, and every refund-like notification has exactly one
    /// revocation event, whatever the order it arrived in.
    static func checkCompleteness(_ sim: SimHarness, databaseURL: String) async throws {
        let scenario = sim.simulator.scenario
        let logger = Self.logger
        let (transactions, revocations) = try await DatabaseClient.with(
            try DatabaseSettings(url: databaseURL), logger: logger
        ) { client in
            var transactions: [String: Bool] = [:]
            for try await (environment, id, revoked) in try await client.query(
                "SELECT environment, transaction_id, revocation_date IS NOT NULL FROM transactions", logger: logger
            ).decode((String, String, Bool).self) {
                transactions["\(environment) \(id)"] = revoked
            }
            var revocations: [String: Int] = [:]
            let topic = PipelineTopics().entitlementRevocations
            for try await uuid in try await client.query(
                "SELECT payload->'cause'->>'notificationUUID' FROM outbox WHERE topic = \(topic) AND payload->>'eventType' <> 'consumption.requested'",
                logger: logger
            ).decode(String.self) { revocations[uuid, default: 0] += 1 }
            return (transactions, revocations)
        }
        let facts = scenario.facts
        let carried = Dictionary(
            facts.transactions.map { ("\($0.environment) \($0.transactionId)", $0.revoked) },
            uniquingKeysWith: { a, _ in a })
        let missing = Set(carried.keys).subtracting(transactions.keys)
        #expect(missing.count == 0, "transactions stored / carried: \(carried.count - missing.count)/\(carried.count)")
        let wrongRevocation = carried.filter { transactions[$0.key] != nil && transactions[$0.key] != $0.value }
        #expect(
            wrongRevocation.count == 0,
            "newest revocation state: \(wrongRevocation.count) wrong, e.g. \(wrongRevocation.keys.sorted().prefix(3))")
        let refundLike = facts.refundLike
        let withOne = refundLike.filter { revocations[$0] == 1 }.count
        #expect(
            withOne == refundLike.count, "revocation events / refund-like notifications: \(withOne)/\(refundLike.count)"
        )
        #expect(
            Set(scenario.notifications.map(\.environment)) == [.production, .sandbox], "the run had both environments")
    }

    /// The last change event of each entitlement carries the sim's final state; revoked ones have a revocation
    /// event; family-shared ones end with access gained exactly when active (and have none if never active).
    static func checkEventsAgainstTheSim(_ sim: SimHarness, published: [EntitlementEvent]) {
        let scenario = sim.simulator.scenario
        var lastChange: [String: EntitlementEvent] = [:]
        var lastFamily: [String: EntitlementEvent] = [:]
        var revocations: [String: [String]] = [:]
        var movedAway: Set<String> = []
        for event in published {
            let key = "\(event.facts.environment) \(event.customer) \(event.productId)"
            if let previous = event.previousCustomer {
                movedAway.insert("\(event.facts.environment) \(previous) \(event.productId)")
            }
            // A migration ends the previous subscription's entitlement inside the one event that grants the new one.
            if let ended = event.migration?.previousState {
                movedAway.insert("\(event.facts.environment) \(ended.customer) \(ended.productId)")
            }
            switch event.stream {
            case .changes where event.eventType.hasPrefix("entitlement."): lastChange[key] = event
            case .family: lastFamily[key] = event
            case .revocations: revocations[key, default: []].append(event.eventType)
            default: break
            }
        }
        let expected = Dictionary(
            scenario.expected.map { ("\($0.environment) \($0.customer) \($0.productId)", $0) },
            uniquingKeysWith: { a, _ in a })
        // A customer whose purchase moved to another (entitlement.customer-changed) has no entitlement of it left.
        let streams = Set(lastChange.keys).subtracting(movedAway.subtracting(expected.keys)).symmetricDifference(
            expected.keys)
        #expect(
            streams.count == 0,
            "one entitlement stream per expected entitlement: \(streams.count) differ, e.g. \(streams.sorted().prefix(3))"
        )
        var wrong: [String] = []
        for (key, entitlement) in expected {
            guard let state = lastChange[key]?.state else { continue }
            if state.active != entitlement.active || (state.revokedAt != nil) != entitlement.revoked {
                wrong.append(key)
            }
            if entitlement.revoked
                && !(revocations[key] ?? []).contains(where: {
                    $0 == "revocation.refunded" || $0 == "revocation.family-revoked"
                })
            {
                wrong.append("\(key) has no revocation event")
            }
            let ownership = scenario.purchases[entitlement.originalTransactionId]?.transactions.last?.inAppOwnershipType
            if ownership == .familyShared {
                // No family event at all is right only for an entitlement never seen active (shuffled delivery
                // can bring the expiry first, and the stale guard then ignores the older grants).
                let gained = lastFamily[key].map { $0.eventType == "family.access-gained" } ?? false
                if gained != entitlement.active {
                    wrong.append(
                        "\(key) family: last \(lastFamily[key]?.eventType ?? "none"), active \(entitlement.active)")
                }
            }
        }
        #expect(wrong.count == 0, "events disagree with the sim for \(wrong.count): \(wrong.sorted().prefix(5))")
    }

    /// Waits until the publisher has relayed every outbox row.
    static func waitForEmptyOutbox(client: PostgresClient, logger: Logger) async throws {
        for _ in 0..<600 {
            var pending = 0
            for try await count in try await client.query(
                "SELECT count(*) FROM outbox_pending", logger: logger
            ).decode(Int.self) {
                pending = count
            }
            if pending == 0 { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        Issue.record("the outbox was not drained")
    }
}

/// What the run left in PostgreSQL: the notification log (uuid → type) and the outbox (event id → topic, and
/// event id → its row's position in the outbox, the order the updater wrote it in).
struct StoredRun {
    var logged: [String: String] = [:]
    var outbox: [String: String] = [:]
    var written: [String: Int64] = [:]

    static func read(client: PostgresClient, logger: Logger) async throws -> StoredRun {
        var run = StoredRun()
        for try await (uuid, type) in try await client.query(
            "SELECT notification_uuid, notification_type FROM notification_log", logger: logger
        )
        .decode((String, String).self) { run.logged[uuid] = type }
        for try await (id, topic, position) in try await client.query(
            "SELECT event_id, topic, id FROM outbox", logger: logger
        )
        .decode((String, String, Int64).self) {
            run.outbox[id] = topic
            run.written[id] = position
        }
        return run
    }

    /// The DLQ rows the updater recorded: uuid, reason and detail of each, for a failure message.
    static func deadLetters(client: PostgresClient, logger: Logger) async throws -> [String] {
        var rows: [String] = []
        for try await (uuid, reason, detail) in try await client.query(
            "SELECT coalesce(notification_uuid, ''), reason, coalesce(detail, '') FROM dead_letters", logger: logger
        ).decode((String, String, String).self) {
            rows.append("\(uuid) \(reason): \(detail)")
        }
        return rows
    }
}

/// Whether the sim's subscription REFUNDs carry `data.status`: `carried` as Apple sends them (the default), `withheld`
/// the less faithful mode in which refund-resolver settles every one.
enum RefundStatus: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case carried
    case withheld

    var testDescription: String { "REFUNDs with data.status \(self.rawValue)" }
}
