public import Logging
public import PostgresNIO
import Synchronization

/// One unpublished downstream event.
public struct OutboxRow: Sendable, Hashable {
    public var id: Int64
    public var eventId: String
    public var topic: String
    public var key: String
    /// The event JSON, exactly as written by the updater.
    public var payload: String
    /// The environment and app of the event (also in the key and the payload), for the record's headers.
    public var environment: String
    public var bundleId: String
    /// The W3C `traceparent` of the span that wrote the event (the updater's), when tracing was on.
    public var traceParent: String?

    public init(
        id: Int64, eventId: String, topic: String, key: String, payload: String, environment: String = "",
        bundleId: String = "", traceParent: String? = nil
    ) {
        self.traceParent = traceParent
        self.id = id
        self.eventId = eventId
        self.topic = topic
        self.key = key
        self.payload = payload
        self.environment = environment
        self.bundleId = bundleId
    }
}

/// Moves outbox rows to Kafka: takes the rows after the publication cursor, hands them to `publish` (which returns
/// once the broker acknowledged them all), then moves the cursor past them, all inside one transaction.
///
/// **The cursor.** Rows are read in (`writer_xid`, `id`) order, where `writer_xid` is the transaction that wrote the
/// row, and only from transactions older than the oldest one still running (`pg_snapshot_xmin` of the statement's
/// snapshot): every row such a transaction wrote is already visible, and every transaction that could still commit has
/// a larger `writer_xid`, so no row ever commits behind the cursor (an `id` alone would not do: ids are taken when a
/// row is inserted, not when it commits). Each relay transaction appends one row to `outbox_publications`, the newest
/// of which is the cursor; nothing in `outbox` is updated, so publishing costs one small insert per transaction
/// instead of a new version of every row and of its indexes. A write transaction that runs long (anywhere on the
/// server: transaction ids are the cluster's) holds back what was written after it until it ends.
///
/// A transaction-scoped advisory lock lets one replica publish at a time, so one customer's events can never
/// overtake each other across replicas; the others find the lock taken and try again. A crash after `publish` and
/// before the commit publishes those events again with the same `eventId` (at-least-once).
///
/// **The batch carried over.** Each batch is read while the broker acknowledges the one before it; so is the batch
/// after a transaction's last, which the relay keeps for its next transaction: that one publishes it at once if the
/// cursor is still where the batch begins (no other replica published meanwhile), instead of waiting for it to be read
/// again.
/// Such a batch stays exactly the next rows: they all come from transactions that had ended, any transaction still to
/// commit has a larger `writer_xid` than every one of them, and no row ahead of the cursor is pruned. Only a full
/// batch is carried: a short one was the last waiting, and more may have come since.
public struct OutboxRelay: Sendable {
    static let lockKey: Int64 = 0x4F55_5442_4F58_0001
    let client: PostgresClient
    let logger: Logger
    /// The batch read at the end of the last transaction, with the cursor it follows.
    let carried = CarriedBatch()

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Publishes batches of up to `limit` rows, at most `batches` of them in one transaction (the next is read while
    /// the broker acknowledges the last, the transaction's last included: see "the batch carried over"; a batch short
    /// of `limit` was the last one waiting); returns how many rows (0 when there were none or another replica holds
    /// the lock). `publish` gets one batch at a time, in order.
    public func relay(
        limit: Int, batches: Int = 8, publish: @escaping @Sendable ([OutboxRow]) async throws -> Void
    ) async throws -> Int {
        let logger = self.logger, carried = self.carried, batches = max(1, batches)
        return try await self.client.withTransaction(logger: logger) { connection in
            var locked = false
            for try await value in try await connection.query(
                "SELECT pg_try_advisory_xact_lock(\(Self.lockKey))", logger: logger
            )
            .decode(Bool.self) { locked = value }
            guard locked else { return 0 }
            let cursor = try await Self.cursor(on: connection, logger: logger)
            var first = carried.take(following: cursor, limit: limit)
            if first == nil {
                first = try await Self.nextBatch(after: cursor, limit: limit, on: connection, logger: logger)
            }
            guard var batch = first else { return 0 }
            var published = 0
            for round in 1...batches {
                let rows = batch.rows
                async let acknowledged: Void = publish(rows)
                let next =
                    rows.count == limit
                    ? try await Self.nextBatch(after: batch.through, limit: limit, on: connection, logger: logger)
                    : nil
                try await acknowledged
                published += rows.count
                guard let next else { break }
                guard round < batches else {
                    // Published only if this transaction commits: a batch carried past a rollback follows a
                    // cursor that never moved, so the next transaction reads again.
                    carried.keep(next, following: batch.through)
                    break
                }
                batch = next
            }
            try await connection.query(
                """
                INSERT INTO outbox_publications (through_xid, through_id, events)
                VALUES (\(String(batch.through.writer))::xid8, \(batch.through.id), \(published))
                """, logger: logger)
            return published
        }
    }

    // MARK: Reading a batch

    /// A row's place in publication order: the transaction that wrote it, then its id.
    typealias Position = (writer: UInt64, id: Int64)

    /// A batch of rows in publication order, and the position of its last row (the next cursor).
    struct Batch: Sendable {
        var rows: [OutboxRow]
        var through: Position
    }

    /// The batch a transaction read after its last one, kept for the relay's next transaction (which uses it when full).
    final class CarriedBatch: Sendable {
        private let state = Mutex<(after: Position, batch: Batch)?>(nil)

        /// Keeps `batch`, the rows after `after` (``take(following:limit:)`` gives back only a full one).
        func keep(_ batch: Batch, following after: Position) {
            self.state.withLock { $0 = (after, batch) }
        }

        /// The batch kept, when it follows `cursor` and has `limit` rows; forgotten either way.
        func take(following cursor: Position, limit: Int) -> Batch? {
            self.state.withLock { kept in
                defer { kept = nil }
                guard let kept, kept.after == cursor, kept.batch.rows.count == limit else { return nil }
                return kept.batch
            }
        }
    }

    /// Where the newest publication left off.
    static func cursor(on connection: PostgresConnection, logger: Logger) async throws -> Position {
        for try await (writer, id) in try await connection.query(
            "SELECT through_xid::text, through_id FROM (\(unescaped: Self.cursor)) AS newest", logger: logger
        ).decode((String, Int64).self) {
            guard let writer = UInt64(writer) else { throw StorageError("outbox cursor has writer '\(writer)'") }
            return (writer, id)
        }
        throw StorageError("the outbox cursor query returned no row")
    }

    /// The next rows after `after` from transactions that have ended, at most `limit`; nil when
    /// there are none. A later statement's snapshot sees every row before the last one this returned (they all come
    /// from transactions that had ended), so reading on from it loses nothing.
    ///
    /// Plain rows, in binary, ordered by the index `outbox_publication_order` (an index scan that stops at `limit`).
    /// Every column is named by its table: an unqualified `ORDER BY writer_xid` would name the selected
    /// `writer_xid::text` instead, sorting the text (so `10` before `9`) after a scan of every pending row.
    static func nextBatch(
        after: Position, limit: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> Batch? {
        var rows: [OutboxRow] = []
        rows.reserveCapacity(limit)
        var through: Position = after
        for try await (id, writerText, eventId, topic, key, payload, environment, bundleId, traceParent)
            in try await connection.query(
                """
                SELECT o.id, o.writer_xid::text, o.event_id, o.topic, o.key, o.payload::text, o.environment,
                       o.bundle_id, o.trace_parent
                FROM outbox AS o
                WHERE (o.writer_xid, o.id) > (\(String(after.writer))::xid8, \(after.id))
                  AND o.writer_xid < (SELECT pg_snapshot_xmin(pg_current_snapshot()))
                ORDER BY o.writer_xid, o.id LIMIT \(limit)
                """, logger: logger
            ).decode((Int64, String, String, String, String, String, String, String, String?).self)
        {
            guard let writer = UInt64(writerText) else {
                throw StorageError("outbox row \(id) has writer_xid '\(writerText)'")
            }
            guard (writer, id) > through else {
                throw StorageError("outbox row \(id) came out of publication order")
            }
            through = (writer, id)
            rows.append(
                OutboxRow(
                    id: id, eventId: eventId, topic: topic, key: key, payload: payload, environment: environment,
                    bundleId: bundleId, traceParent: traceParent))
        }
        return rows.isEmpty ? nil : Batch(rows: rows, through: through)
    }

    /// The publication cursor: the newest publication's position, or the start when there is none (pruning keeps the
    /// newest; an emptied table starts over, publishing again at least once). ``OutboxPublicationsMigration``'s
    /// `outbox_pending` view reads it the same way.
    static let cursor = """
        SELECT * FROM ((SELECT through_xid, through_id FROM outbox_publications
                        ORDER BY through_xid DESC, through_id DESC LIMIT 1)
                       UNION ALL SELECT '0', 0) AS cursor
        ORDER BY 1 DESC, 2 DESC LIMIT 1
        """

    /// How many events wait to be published.
    public func backlog() async throws -> Int {
        var count = 0
        for try await value in try await self.client.query(
            "SELECT count(*) FROM outbox_pending", logger: self.logger
        )
        .decode(Int.self) { count = value }
        return count
    }
}
