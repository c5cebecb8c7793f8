import Logging
import PostgresNIO
import Storage
import Synchronization
import TestSupport
import Testing

/// The relay's cursor in a real PostgreSQL: rows are published in the order their transactions wrote them, a row
/// whose transaction commits after a later one was published is still published (the reason an id cursor would not
/// do), a batch the broker did not take moves nothing, and a batch carried over to the next transaction is published
/// only while the cursor is where it begins.
@Suite(.tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(3))) struct OutboxRelayTests {
    let logger: Logger = {
        var logger = Logger(label: "outbox-relay-test")
        logger.logLevel = .error
        return logger
    }()

    /// Inserts one event row named `name` on `connection`.
    static func insert(_ name: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "INSERT INTO outbox (event_id, topic, key, payload) VALUES (\(name), 't', \(name), '{}')", logger: logger)
    }

    /// One relay pass; returns the event ids it published, in order.
    static func relay(_ relay: OutboxRelay) async throws -> [String] {
        let published = Mutex<[String]>([])
        _ = try await relay.relay(limit: 100) { rows in published.withLock { $0 += rows.map(\.eventId) } }
        return published.withLock { $0 }
    }

    @Test func aRowCommittedBehindAPublishedOneIsStillPublished() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, _ in
            let relay = OutboxRelay(client: client, logger: logger)
            let (inserted, insertedSignal) = AsyncStream<Void>.makeStream()
            let (release, releaseSignal) = AsyncStream<Void>.makeStream()
            // Transaction A takes the smaller id and stays open while B takes the next one and commits.
            let first = Task {
                try await client.withTransaction(logger: logger) { connection in
                    try await Self.insert("a", on: connection, logger: logger)
                    insertedSignal.yield()
                    for await _ in release { break }
                }
            }
            for await _ in inserted { break }
            try await client.withConnection { connection in
                try await Self.insert("b", on: connection, logger: logger)
            }
            #expect(try await Self.relay(relay) == [], "b waits while a transaction older than it runs")
            #expect(try await relay.backlog() == 1, "b is committed and pending")
            releaseSignal.yield()
            try await first.value
            #expect(try await Self.relay(relay) == ["a", "b"], "both, in the order their transactions began writing")
            #expect(try await relay.backlog() == 0)
            #expect(try await Self.relay(relay) == [], "nothing twice")
        }
    }

    /// Writer transaction ids are numbers, not text: a batch read in text order would put transaction 10 before 9.
    @Test func writersArePublishedInNumericOrderAcrossADigit() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, _ in
            let relay = OutboxRelay(client: client, logger: logger)
            // Ids in the opposite order to the writers, so that only the writer's order puts them right.
            for (name, writer) in [("by-ten", "10"), ("by-nine", "9"), ("by-hundred", "100")] {
                try await client.query(
                    """
                    INSERT INTO outbox (event_id, topic, key, payload, writer_xid)
                    VALUES (\(name), 't', \(name), '{}', \(writer)::xid8)
                    """, logger: logger)
            }
            #expect(try await Self.relay(relay) == ["by-nine", "by-ten", "by-hundred"])
            #expect(try await Self.batches(relay, limit: 2, batches: 1) == [], "and nothing twice")
        }
    }

    @Test func aBatchTheBrokerDidNotTakeMovesNothing() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, _ in
            let relay = OutboxRelay(client: client, logger: logger)
            for name in ["x", "y", "z"] {
                try await client.withConnection { try await Self.insert(name, on: $0, logger: logger) }
            }
            struct BrokerAway: Error {}
            let error = await #expect(throws: PostgresTransactionError.self) {
                _ = try await relay.relay(limit: 2, batches: 1) { _ in throw BrokerAway() }
            }
            #expect(error?.closureError is BrokerAway, "the broker's failure, and the transaction rolled back")
            #expect(try await relay.backlog() == 3)
            let published = Mutex<[[String]]>([])
            _ = try await relay.relay(limit: 2, batches: 1) { rows in
                published.withLock { $0.append(rows.map(\.eventId)) }
            }
            #expect(published.withLock { $0 } == [["x", "y"]], "a batch is at most the limit, oldest first")
            for name in ["v", "w"] {
                try await client.withConnection { try await Self.insert(name, on: $0, logger: logger) }
            }
            published.withLock { $0 = [] }
            _ = try await relay.relay(limit: 2, batches: 8) { rows in
                published.withLock { $0.append(rows.map(\.eventId)) }
            }
            #expect(
                published.withLock { $0 } == [["z", "v"], ["w"]], "batches in order, read on within a transaction")
            var publications: [Int] = []
            for try await events in try await client.query(
                "SELECT events FROM outbox_publications WHERE events > 0 ORDER BY through_xid, through_id",
                logger: logger
            ).decode(Int.self) { publications.append(events) }
            #expect(publications == [2, 3], "one publication per transaction, with how many it published")
        }
    }

    /// One relay pass with `limit` and `batches` (`publish` throws at batch number `failing`); returns each batch's
    /// rows as "event-id payload", in order.
    static func batches(
        _ relay: OutboxRelay, limit: Int, batches: Int, failing: Int? = nil
    ) async throws -> [[String]] {
        let published = Mutex<[[String]]>([])
        struct BrokerAway: Error {}
        _ = try await relay.relay(limit: limit, batches: batches) { rows in
            try published.withLock {
                if $0.count + 1 == failing { throw BrokerAway() }
                $0.append(rows.map { "\($0.eventId) \($0.payload)" })
            }
        }
        return published.withLock { $0 }
    }

    @Test func aBatchCarriedOverIsPublishedNextOnlyWhileTheCursorIsWhereItBegins() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, _ in
            let replicaA = OutboxRelay(client: client, logger: logger)
            let replicaB = OutboxRelay(client: client, logger: logger)
            for name in ["e1", "e2", "e3", "e4", "e5", "e6"] {
                try await client.withConnection { try await Self.insert(name, on: $0, logger: logger) }
            }
            #expect(try await Self.batches(replicaA, limit: 2, batches: 1) == [["e1 {}", "e2 {}"]])
            // A row cannot change once written; changing e3 here shows whether it is read again.
            try await client.query(
                "UPDATE outbox SET payload = '{\"read\": \"again\"}' WHERE event_id = 'e3'", logger: logger)
            try await client.withConnection { try await Self.insert("e7", on: $0, logger: logger) }
            #expect(
                try await Self.batches(replicaA, limit: 2, batches: 1) == [["e3 {}", "e4 {}"]],
                "read after the previous transaction's last batch, published without reading it again")
            #expect(
                try await Self.batches(replicaB, limit: 2, batches: 8) == [["e5 {}", "e6 {}"], ["e7 {}"]],
                "another replica reads on from the cursor")
            #expect(
                try await Self.batches(replicaA, limit: 2, batches: 8) == [],
                "e5 and e6, carried over by A, were published by B meanwhile: nothing twice")
            #expect(try await replicaA.backlog() == 0)
        }
    }

    @Test func aFailedBatchCarriedOverOrReadOnMovesNothing() async throws {
        let logger = self.logger
        try await withMigratedDatabase(logger: logger) { client, _ in
            let relay = OutboxRelay(client: client, logger: logger)
            for name in ["f1", "f2", "f3", "f4", "f5", "f6", "f7"] {
                try await client.withConnection { try await Self.insert(name, on: $0, logger: logger) }
            }
            #expect(try await Self.batches(relay, limit: 2, batches: 1) == [["f1 {}", "f2 {}"]])
            await #expect(throws: PostgresTransactionError.self, "the broker failed the carried batch") {
                _ = try await Self.batches(relay, limit: 2, batches: 8, failing: 1)
            }
            await #expect(throws: PostgresTransactionError.self, "the second batch failed") {
                _ = try await Self.batches(relay, limit: 2, batches: 8, failing: 2)
            }
            #expect(try await relay.backlog() == 5, "both transactions rolled back")
            #expect(
                try await Self.batches(relay, limit: 2, batches: 8)
                    == [["f3 {}", "f4 {}"], ["f5 {}", "f6 {}"], ["f7 {}"]],
                "published from the cursor, once each, in order")
            #expect(try await relay.backlog() == 0)
        }
    }
}
