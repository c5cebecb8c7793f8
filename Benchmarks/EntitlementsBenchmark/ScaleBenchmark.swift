import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import Storage
import TestSupport

/// The cost of the hot work at production size against the same work on a nearly empty database, in one run
/// (`entitlements-benchmark scale …`, `Benchmarks/run-scale.sh`): ``ScaleData`` fills PostgreSQL with `customers`
/// customers and `renewals` renewals each (a year of a large app: 1,000,000 × 10 = 10 million notifications), and
/// before and after, the same measurements run: notifications applied per second through the updater's repository,
/// customer look-ups (the statement under customer-api's GET) offered at 1,000 a second, the renewal sweep's query,
/// the support console's customer query with its timeline, and its consumption-request and dead-letter queries. Then
/// sizes (bytes per notification and per customer) and the hot statements' plans.
enum ScaleBenchmark {
    /// One round of measurements.
    struct Figures {
        var applied = 0.0
        var lookupP50 = 0.0, lookupP99 = 0.0
        /// The first five seconds of look-ups (the cache cold for this round's random customers).
        var coldP50 = 0.0, coldP99 = 0.0
        var sweep = 0.0, console = 0.0, consumption = 0.0, deadLetters = 0.0
    }

    static func run(databaseURL: String, customers: Int, renewals: Int, logger: Logger) async throws {
        let settings = try DatabaseSettings(url: databaseURL)
        try await DatabaseClient.with(settings, logger: logger) { client in
            try await MigrationRunner().migrate(client: client, logger: logger)
            let start = Int64(Date().timeIntervalSince1970 * 1000) - Int64(renewals) * 30 * 86_400_000 - 86_400_000
            // The nearly empty database: 1,000 customers, or a tenth of a smaller run (the test command's brief one).
            let small = min(1_000, max(1, customers / 10))
            try await ScaleData.generate(
                customers: 0..<small, renewals: renewals, start: start, client: client, logger: logger)
            try await Self.addSupportRows(customers: 0..<small, client: client, logger: logger)
            try await client.query("VACUUM ANALYZE", logger: logger)
            // A first round warms the process (connections, prepared statements) and is not reported.
            _ = try await Self.measure(client: client, customers: small, round: "warm-up", logger: logger)
            let empty = try await Self.measure(client: client, customers: small, round: "empty", logger: logger)

            let chunk = 50_000
            let began = ContinuousClock.now
            var done = small
            while done < customers {
                let next = min(done + chunk, customers)
                try await ScaleData.generate(
                    customers: done..<next, renewals: renewals, start: start, client: client, logger: logger)
                done = next
                let elapsed = (ContinuousClock.now - began).realSeconds
                let rate = Double(done - small) / elapsed
                print(
                    String(
                        format: "  generated %d customers (%d notifications) in %.0f s; ETA %.0f s", done,
                        done * (renewals + 1), elapsed, Double(customers - done) / max(rate, 1)))
            }
            try await Self.addSupportRows(customers: small..<customers, client: client, logger: logger)
            print(String(format: "generated in %.0f s", (ContinuousClock.now - began).realSeconds))
            try await client.query("VACUUM ANALYZE", logger: logger)
            let sizes = try await Self.sizes(client: client, logger: logger)
            let notifications = Double(customers * (renewals + 1))
            print(
                String(
                    format:
                        "database %.2f GB; per notification %.0f B (transactions %.0f, log %.0f); per customer %.0f B "
                        + "(entitlement, subscription, renewal info, binding); outbox rows of the last week %.0f B each",
                    sizes["database"]! / 1e9,
                    (sizes["transactions"]! + sizes["notification_log"]!) / notifications,
                    sizes["transactions"]! / notifications, sizes["notification_log"]! / notifications,
                    (sizes["entitlements"]! + sizes["subscriptions"]! + sizes["renewal_infos"]!
                        + sizes["customer_bindings"]!) / Double(customers),
                    sizes["outbox"]! / Double(customers / 4)))
            for table in sizes.keys.sorted() where table != "database" {
                print(String(format: "  %-22@ %8.1f MB", table as NSString, sizes[table]! / 1_048_576))
            }
            let big = try await Self.measure(client: client, customers: customers, round: "size", logger: logger)

            print("| measurement | empty (\(small) customers) | at size (\(customers) customers) | at size / empty |")
            print("|---|---|---|---|")
            func row(_ name: String, _ a: Double, _ b: Double, _ unit: String) {
                print(String(format: "| %@ | %.2f %@ | %.2f %@ | %.2f |", name, a, unit, b, unit, b / max(a, 1e-9)))
            }
            row("updater: notifications applied/s", empty.applied, big.applied, "/s")
            row("customer look-up p50 at 1,000/s, cold cache", empty.coldP50, big.coldP50, "ms")
            row("customer look-up p99 at 1,000/s, cold cache", empty.coldP99, big.coldP99, "ms")
            row("customer look-up p50 at 1,000/s", empty.lookupP50, big.lookupP50, "ms")
            row("customer look-up p99 at 1,000/s", empty.lookupP99, big.lookupP99, "ms")
            row("renewal sweep query (median)", empty.sweep, big.sweep, "ms")
            row("support console: customer + timeline (median)", empty.console, big.console, "ms")
            row("support console: consumption requests (median)", empty.consumption, big.consumption, "ms")
            row("support console: dead letters (median)", empty.deadLetters, big.deadLetters, "ms")

            for (name, plan) in try await HotStatementPlans.explain(
                customer: "scale-\(customers / 2)", bundleId: "com.example.app", client: client, logger: logger)
            {
                // A sequential scan of a table that grows with the data is what must not be there (the planner scans
                // tables of a few rows, such as an empty subscription_migrations, on purpose).
                let growing = [
                    "transactions", "notification_log", "entitlements", "subscriptions", "renewal_infos",
                    "customer_bindings", "outbox", "consumption_requests", "dead_letters",
                ]
                let scans = plan.filter { line in growing.contains { line.contains("Seq Scan on \($0) ") } }
                print(
                    "plan of \(name): "
                        + (scans.isEmpty ? "every growing table through an index" : "SEQUENTIAL SCANS: \(scans)"))
                for line in plan { print("    " + line) }
            }
        }
    }

    /// Every measurement once, on `customers` generated customers.
    static func measure(client: PostgresClient, customers: Int, round: String, logger: Logger) async throws -> Figures {
        var figures = Figures()
        let bundleId = "com.example.app"
        // The updater: new subscriptions' life cycles, four lanes, 50 notifications a transaction.
        let records = (0..<1_000).flatMap { VerifiedRecords.lifeCycle(1_000_000_000 + $0) }
            .map { record -> VerifiedNotificationRecord in
                var renamed = record
                renamed.subject = round + "-" + record.subject
                renamed.notification.transaction?.originalTransactionId = renamed.subject
                renamed.notification.renewalInfo?.originalTransactionId = renamed.subject
                renamed.notification.payload.notificationUUID =
                    round + "-" + (record.notification.payload.notificationUUID ?? "")
                return renamed
            }
        let repository = EntitlementRepository(client: client, logger: logger)
        let began = ContinuousClock.now
        try await UpdaterLanes.apply(records, repository: repository)
        figures.applied = Double(records.count) / (ContinuousClock.now - began).realSeconds

        // Look-ups offered at 1,000 a second for 5 s, each timed from when it was due (queueing included); twice,
        // the first with the cache cold for the customers it draws, the second as a running service sees it.
        let lookup = CustomerLookup(client: client, logger: logger)
        let cold = try await Self.lookups(lookup, customers: customers, bundleId: bundleId)
        figures.coldP50 = cold[cold.count / 2]
        figures.coldP99 = cold[cold.count * 99 / 100]
        let latencies = try await Self.lookups(lookup, customers: customers, bundleId: bundleId)
        figures.lookupP50 = latencies[latencies.count / 2]
        figures.lookupP99 = latencies[latencies.count * 99 / 100]

        let sweep = RenewalSweep(client: client, logger: logger, topics: PipelineTopics())
        figures.sweep = try await Self.median(20) {
            _ = try await sweep.sweep(endedBefore: Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000, batch: 100)
        }
        let support = SupportLookup(client: client, logger: logger)
        let deadLetters = DeadLetters(client: client, logger: logger)
        figures.console = try await Self.median(200) {
            let subject = "scale-\(Int.random(in: 0..<customers))"
            _ = try await support.customer(for: subject, bundleId: bundleId)
            _ = try await support.timeline(bundleId: bundleId, subjects: [subject])
        }
        figures.consumption = try await Self.median(200) {
            let subject = "scale-\(Int.random(in: 0..<customers))"
            _ = try await support.consumptionRequests(bundleId: bundleId, customer: subject, subjects: [subject])
        }
        figures.deadLetters = try await Self.median(200) {
            _ = try await deadLetters.rows(bundleId: bundleId, subjects: ["scale-\(Int.random(in: 0..<customers))"])
        }
        return figures
    }

    /// What support queries read, in a large app's proportions, written by the services' own statements: a refund
    /// request (CONSUMPTION_REQUEST, applied by the updater's repository) for one customer in a hundred and a dead
    /// letter (the updater's DLQ recorder) for one in a thousand.
    static func addSupportRows(customers: Range<Int>, client: PostgresClient, logger: Logger) async throws {
        let requests = customers.filter { $0 % 100 == 0 }.map {
            VerifiedRecords.step(
                "CONSUMPTION_REQUEST", original: "scale-\($0)", day: 400, expiresDay: 420, status: .active,
                transactionDay: 390)
        }
        try await UpdaterLanes.apply(requests, repository: EntitlementRepository(client: client, logger: logger))
        let letters = customers.filter { $0 % 1_000 == 0 }.map { index in
            DeadLetters.Entry(
                topic: "appstore.notifications.raw", partition: Int32(index % 12), offset: Int64(index),
                subject: "scale-\(index)", environment: "Sandbox", bundleId: "com.example.app", reason: "chain",
                detail: "certificate chain does not end in a trusted root", notificationUUID: "dlq-\(index)",
                json: #"{"reason":"chain"}"#)
        }
        try await DeadLetters(client: client, logger: logger).record(letters)
    }

    /// 5,000 look-ups of random customers offered at 1,000 a second, each timed from when it was due (queueing
    /// included); sorted, in milliseconds.
    static func lookups(_ lookup: CustomerLookup, customers: Int, bundleId: String) async throws -> [Double] {
        let due = ContinuousClock.now + .milliseconds(100)
        return try await withThrowingTaskGroup(of: Double.self) { group -> [Double] in
            for index in 0..<5_000 {
                let at = due + .milliseconds(index)
                let number = Int.random(in: 0..<customers)
                group.addTask {
                    try await Task.sleep(until: at)
                    let (id, kind): (String, CustomerIDKind) =
                        number % 3 == 0 ? ("user-\(number)", .appUserId) : ("scale-\(number)", .originalTransactionId)
                    _ = try await lookup.view(
                        bundleId: bundleId, customer: id, kind: kind, environment: "Sandbox", asOf: 0)
                    return (ContinuousClock.now - at).realSeconds * 1000
                }
            }
            var all: [Double] = []
            for try await latency in group { all.append(latency) }
            return all.sorted()
        }
    }

    /// The median duration of `count` runs, in milliseconds.
    static func median(_ count: Int, _ body: () async throws -> Void) async throws -> Double {
        var times: [Double] = []
        for _ in 0..<count {
            let began = ContinuousClock.now
            try await body()
            times.append((ContinuousClock.now - began).realSeconds * 1000)
        }
        return times.sorted()[count / 2]
    }

    /// Bytes of the database and of each table with its indexes.
    static func sizes(client: PostgresClient, logger: Logger) async throws -> [String: Double] {
        var sizes: [String: Double] = [:]
        for try await (name, bytes) in try await client.query(
            """
            SELECT relname::text, pg_total_relation_size(oid) FROM pg_class
            WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace
            UNION ALL SELECT 'database', pg_database_size(current_database())
            """, logger: logger
        ).decode((String, Int64).self) {
            sizes[name] = Double(bytes)
        }
        return sizes
    }
}
