import Dispatch
import EntitlementDecisions
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import RdKafka
import Storage
import TestSupport

/// Measures, against a local PostgreSQL and broker (`Benchmarks/run-entitlements.sh` starts them):
/// notifications applied per second (`LANES` concurrent lanes over disjoint subjects, as the updater applies
/// them), one transaction each (how the updater worked before) and `TRANSACTION_SIZE` per transaction (how it
/// works now), next to bare single-row transactions with as many workers (measured first and again last, against
/// their mean); and outbox events published per second next to producing the same payloads directly (two rounds of
/// each, in turn, against each other's mean).
///
/// Usage: `entitlements-benchmark DATABASE_URL BOOTSTRAP [SUBSCRIPTIONS] [LANES] [TRANSACTION_SIZE]`, or
/// `entitlements-benchmark soak DATABASE_URL [CUSTOMERS] [DAYS] [SECONDS_PER_DAY]` (``RetentionSoak``), or
/// `entitlements-benchmark scale DATABASE_URL [CUSTOMERS] [RENEWALS]` (``ScaleBenchmark``).
@main
enum EntitlementsBenchmarkMain {
    static func main() async throws {
        let arguments = CommandLine.arguments
        if arguments.count >= 3 && arguments[1] == "scale" {
            var logger = Logger(label: "scale-benchmark")
            logger.logLevel = .error
            try await ScaleBenchmark.run(
                databaseURL: arguments[2], customers: arguments.count > 3 ? Int(arguments[3]) ?? 1_000_000 : 1_000_000,
                renewals: arguments.count > 4 ? Int(arguments[4]) ?? 9 : 9, logger: logger)
            return
        }
        if arguments.count >= 3 && arguments[1] == "soak" {
            var logger = Logger(label: "retention-soak")
            logger.logLevel = .error
            try await RetentionSoak.run(
                databaseURL: arguments[2], customers: arguments.count > 3 ? Int(arguments[3]) ?? 5_000 : 5_000,
                days: arguments.count > 4 ? Int(arguments[4]) ?? 30 : 30,
                secondsPerDay: arguments.count > 5 ? Double(arguments[5]) ?? 4 : 4, logger: logger)
            return
        }
        guard arguments.count >= 3 else {
            print("usage: entitlements-benchmark DATABASE_URL BOOTSTRAP [SUBSCRIPTIONS]")
            exit(2)
        }
        let settings = try DatabaseSettings(url: arguments[1])
        let bootstrap = [arguments[2]]
        let subscriptions = arguments.count > 3 ? Int(arguments[3]) ?? 2000 : 2000
        let logger: Logger = {
            var logger = Logger(label: "entitlements-benchmark")
            logger.logLevel = .error
            return logger
        }()
        // As a topic carries them: each subscription's notifications in order, subscriptions interleaved (a
        // subscription's next notification comes days later, after many others').
        let lifeCycles = (0..<subscriptions).map(VerifiedRecords.lifeCycle)
        let records = (0..<(lifeCycles.map(\.count).max() ?? 0)).flatMap { step in
            lifeCycles.compactMap { step < $0.count ? $0[step] : nil }
        }
        let workers = arguments.count > 4 ? Int(arguments[4]) ?? 8 : 8
        let transactionSize = arguments.count > 5 ? Int(arguments[5]) ?? 50 : 50

        let (bare, single, grouped, applied, events) = try await DatabaseClient.with(settings, logger: logger) {
            client -> ((Double, Double), Double, Double, Double, Int) in
            try await MigrationRunner().migrate(client: client, logger: logger)
            try await client.query("CREATE TABLE IF NOT EXISTS bench_baseline (id bigint PRIMARY KEY)", logger: logger)
            /// Bare single-row transactions into an emptied table, checked before they are a figure: every one it
            /// counted committed its row.
            let bareTransactions: @Sendable () async throws -> Double = {
                try await client.query("TRUNCATE bench_baseline", logger: logger)
                let rate = try await Self.rate(count: records.count, workers: workers) { worker, index in
                    try await client.withTransaction(logger: logger) { connection -> Void in
                        _ = try await connection.query(
                            "INSERT INTO bench_baseline (id) VALUES (\(Int64(index * workers + worker)))",
                            logger: logger)
                    }
                }
                var stored = 0
                for try await count in try await client.query("SELECT count(*) FROM bench_baseline", logger: logger)
                    .decode(Int.self)
                { stored = count }
                guard stored == records.count / workers * workers else {
                    throw ImplausibleBaselineError(
                        "bare INSERT transactions: \(records.count / workers * workers) counted, \(stored) rows stored")
                }
                return rate
            }
            let bareBefore = try await bareTransactions()
            let repository = EntitlementRepository(client: client, logger: logger)
            let bySubject = Dictionary(grouping: records, by: { abs($0.subject.hashValue % workers) })
            let lanes = (0..<workers).map { bySubject[$0] ?? [] }
            let single = try await Self.rate(lanes: lanes) { record in
                _ = try await repository.apply(record, receivedAt: nil)
            }
            /// The lanes' records applied `transactionSize` per transaction, on empty tables.
            let batched: @Sendable ([[VerifiedNotificationRecord]]) async throws -> Double = { lanes in
                try await Self.emptyTables(client, logger: logger)
                return try await Self.rate(
                    lanes: lanes.map { lane in
                        stride(from: 0, to: lane.count, by: transactionSize).map {
                            Array(lane[$0..<min($0 + transactionSize, lane.count)])
                        }
                    }, items: { $0.count }
                ) { batch in
                    _ = try await repository.apply(
                        batch.map { EntitlementInput(.notification($0), receivedAt: nil) })
                }
            }
            // The worst order for waves first: each subject's notifications back to back.
            let grouped = try await batched(lanes.map(Self.backToBack))
            let applied = try await batched(lanes)
            // The baseline again, after the others: the database has grown and checkpointed meanwhile, so a baseline
            // measured only first, on an emptier server, need not be what the server gave the measurements after it.
            let bare = (bareBefore, try await bareTransactions())
            var events = 0
            for try await count in try await client.query("SELECT count(*) FROM outbox", logger: logger).decode(
                Int.self)
            { events = count }
            return (bare, single, grouped, applied, events)
        }

        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(client: KafkaClientSettings(bootstrapServers: bootstrap)),
            logger: logger)
        let (direct, published) = try await DatabaseClient.with(settings, logger: logger) {
            client -> ([Double], [Double]) in
            var rows: [OutboxRow] = []
            let query = try await client.query(
                "SELECT id, event_id, topic, key, payload::text FROM outbox ORDER BY id", logger: logger)
            for try await (id, eventId, topic, key, payload) in query.decode(
                (Int64, String, String, String, String).self)
            {
                rows.append(OutboxRow(id: id, eventId: eventId, topic: topic, key: key, payload: payload))
            }
            // The producer connects and learns each topic's partitions before the clock starts (the relay's
            // producer is then warm too): a cold first produce measured the connection, not the broker.
            for topic in Set(rows.map(\.topic)) {
                _ = try await producer.enqueue(ProducerRecord(topic: topic, key: nil, value: Array("warm-up".utf8)))
                    .report
            }
            // The same payloads in the relay's batches (`relayBatch` in flight, each batch awaited), without the
            // outbox: what the relay adds is reading rows and moving its cursor, not a different way to produce.
            let produceDirectly = {
                try await Self.timed(rows.count) {
                    for start in stride(from: 0, to: rows.count, by: Self.relayBatch) {
                        try await Self.produce(rows[start..<min(start + Self.relayBatch, rows.count)], with: producer)
                    }
                }
            }
            let relay = OutboxRelay(client: client, logger: logger)
            /// The relay from the start of the outbox (no publication yet: its cursor starts over).
            let publishFromTheOutbox = {
                try await client.query("TRUNCATE outbox_publications", logger: logger)
                return try await Self.timed(rows.count) {
                    while try await relay.relay(
                        limit: Self.relayBatch, publish: { batch in try await Self.produce(batch, with: producer) }) > 0
                    {}
                }
            }
            // Two rounds in turn: the broker holds more after each, so one baseline measured first, on an emptier
            // broker, need not be what the broker gave the relay measured after it.
            var direct: [Double] = [], published: [Double] = []
            for _ in 1...2 {
                direct.append(try await produceDirectly())
                published.append(try await publishFromTheOutbox())
            }
            return (direct, published)
        }
        await producer.shutdown()

        print(
            "Entitlements benchmark: \(records.count) notifications of \(subscriptions) subscriptions, \(events) events, \(workers) workers"
        )
        print("measurement (2 cores, PostgreSQL and broker co-located)                 per second  compared with")
        let bareMean = (bare.0 + bare.1) / 2
        Self.row(
            "bare single-row INSERT transactions (mean of first and last)", bareMean,
            String(format: "baseline (%.0f first, %.0f last)", bare.0, bare.1))
        let singleRatio: Double = single / bareMean
        let applyRatio: Double = applied / bareMean
        Self.row(
            "notifications applied, one per transaction", single,
            String(format: "%.2f of bare transactions", singleRatio))
        Self.row(
            "  \(transactionSize) per transaction, each subject's notifications back to back", grouped,
            String(format: "%.2f of bare transactions (the worst order for waves)", grouped / bareMean))
        Self.row(
            "notifications applied, \(transactionSize) per transaction (the updater)", applied,
            String(format: "%.2f of bare transactions", applyRatio))
        let directMean = direct.reduce(0, +) / Double(direct.count)
        let publishedMean = published.reduce(0, +) / Double(published.count)
        Self.row(
            "events produced directly (acks=all), no outbox, mean of 2 rounds", directMean,
            "baseline (" + direct.map { String(format: "%.0f", $0) }.joined(separator: ", ") + ")")
        Self.row(
            "events published from the outbox (read on from the cursor, produce, move it), in turn", publishedMean,
            String(format: "%.2f of direct produce (", publishedMean / directMean)
                + published.map { String(format: "%.0f", $0) }.joined(separator: ", ") + ")")
    }

    /// Events the relay publishes per batch (the event-publisher's batch), and the direct baseline's batch.
    static let relayBatch = 500

    /// Produces a batch of outbox rows, all in flight at once, and waits for every acknowledgement: the relay's
    /// publish and the direct baseline both produce this way, so the ratio measures only the outbox's work.
    static func produce(_ rows: some Collection<OutboxRow>, with producer: KafkaProducer) async throws {
        var pending: [PendingDelivery] = []
        pending.reserveCapacity(rows.count)
        for row in rows {
            pending.append(
                try await producer.enqueue(
                    ProducerRecord(
                        topic: row.topic, key: Array(row.key.utf8), value: Array(row.payload.utf8),
                        headers: [KafkaHeader(name: "event-id", text: row.eventId)])))
        }
        for delivery in pending { _ = try await delivery.report }
    }

    /// Runs `count` operations spread over `workers` concurrent loops; returns operations per second.
    static func rate(count: Int, workers: Int, _ operation: @escaping @Sendable (Int, Int) async throws -> Void)
        async throws -> Double
    {
        try await self.timed(count) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<workers {
                    group.addTask { for index in 0..<(count / workers) { try await operation(worker, index) } }
                }
                try await group.waitForAll()
            }
        }
    }

    /// A lane's records with each subject's notifications back to back (subjects in order of first appearance,
    /// each subject's own order kept).
    static func backToBack(_ lane: [VerifiedNotificationRecord]) -> [VerifiedNotificationRecord] {
        var subjects: [String] = []
        var bySubject: [String: [VerifiedNotificationRecord]] = [:]
        for record in lane {
            if bySubject[record.subject] == nil { subjects.append(record.subject) }
            bySubject[record.subject, default: []].append(record)
        }
        return subjects.flatMap { bySubject[$0] ?? [] }
    }

    /// Empties every table the updater writes (the schema stays), so the next measurement starts as the first did.
    static func emptyTables(_ client: PostgresClient, logger: Logger) async throws {
        var tables: [String] = []
        let query = try await client.query(
            """
            SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT IN ('schema_migrations', 'bench_baseline')
            """, logger: logger)
        for try await table in query.decode(String.self) { tables.append(table) }
        try await client.query("TRUNCATE \(unescaped: tables.joined(separator: ", "))", logger: logger)
    }

    /// Runs each lane's items in order, lanes concurrently; returns units per second (`items` counts an item's units).
    static func rate<Item: Sendable>(
        lanes: [[Item]], items: (Item) -> Int = { _ in 1 },
        _ operation: @escaping @Sendable (Item) async throws -> Void
    ) async throws -> Double {
        try await self.timed(lanes.flatMap { $0 }.map(items).reduce(0, +)) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in lanes { group.addTask { for item in lane { try await operation(item) } } }
                try await group.waitForAll()
            }
        }
    }

    /// Operations per second of a timed block that performs `count` operations.
    static func timed(_ count: Int, _ body: () async throws -> Void) async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        return Double(count) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }

    /// Prints one aligned row.
    static func row(_ name: String, _ rate: Double, _ comparison: String) {
        print(
            "\(name.padding(toLength: 74, withPad: " ", startingAt: 0)) \(String(format: "%10.0f", rate))  \(comparison)"
        )
    }
}
