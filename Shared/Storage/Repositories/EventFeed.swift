public import Logging
public import PostgresNIO

/// The events of one app and environment as a feed a consumer without Kafka reads from a cursor: the outbox rows of
/// the three `entitlements.*` topics, in the order they were published (`writer_xid`, then `id`), only up to the
/// relay's cursor, so the feed never shows an event before its topic has it, and no row can ever commit behind a
/// position the feed has passed. The bodies are the events' JSON as published, `sequence` included. Rows are kept as
/// long as published outbox rows are (`RETAIN_PUBLISHED_OUTBOX`, 7 days by default).
public struct EventFeed: Sendable {
    /// A position in the feed: after the row written by transaction `writer` with id `id`.
    public struct Cursor: Sendable, Hashable, CustomStringConvertible {
        public var writer: UInt64
        public var id: Int64

        /// The start of the feed.
        public static let start = Cursor(writer: 0, id: 0)

        public init(writer: UInt64, id: Int64) {
            self.writer = writer
            self.id = id
        }

        /// Reads the text form, `v1.WRITER.ID`; nil for anything else.
        public init?(_ text: String) {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "v1", let writer = UInt64(parts[1]), let id = Int64(parts[2]), id >= 0
            else { return nil }
            self.init(writer: writer, id: id)
        }

        /// The text form a consumer keeps and sends back as `after`.
        public var description: String { "v1.\(self.writer).\(self.id)" }
    }

    /// What one read found: the events' JSON in feed order, and where the next read starts.
    public struct Page: Sendable {
        public var events: [String]
        /// After the last event, or, when fewer than the limit were found, after everything published so far.
        public var next: Cursor
    }

    let client: PostgresClient
    let logger: Logger
    let topics: [String]

    /// A feed over `topics` (the three `entitlements.*` topics).
    public init(client: PostgresClient, topics: [String], logger: Logger) {
        self.client = client
        self.topics = topics
        self.logger = logger
    }

    /// At most `limit` events of the app and environment published after `after`.
    public func read(environment: String, bundleId: String, after: Cursor, limit: Int) async throws -> Page {
        let rows = try await self.client.query(
            """
            WITH published AS (\(unescaped: OutboxRelay.cursor))
            SELECT o.writer_xid::text, o.id, o.payload::text, p.through_xid::text, p.through_id
            FROM published p
            LEFT JOIN LATERAL (
                SELECT writer_xid, id, payload FROM outbox
                WHERE (writer_xid, id) > (\(String(after.writer))::xid8, \(after.id))
                  AND (writer_xid, id) <= (p.through_xid, p.through_id)
                  AND environment = \(environment) AND bundle_id = \(bundleId) AND topic = ANY(\(self.topics))
                ORDER BY writer_xid, id LIMIT \(limit)
            ) o ON true
            ORDER BY o.writer_xid, o.id
            """, logger: self.logger)
        var events: [String] = []
        var last: Cursor?
        var published = after
        for try await (writer, id, payload, throughWriter, throughId) in rows.decode(
            (String?, Int64?, String?, String, Int64).self)
        {
            if let throughWriter = UInt64(throughWriter) { published = Cursor(writer: throughWriter, id: throughId) }
            guard let writer = writer.flatMap(UInt64.init), let id, let payload else { continue }
            events.append(payload)
            last = Cursor(writer: writer, id: id)
        }
        if events.count >= limit, let last { return Page(events: events, next: last) }
        // Everything published up to the relay's cursor was read: the next read starts there (never behind `after`).
        let next = (published.writer, published.id) > (after.writer, after.id) ? published : after
        return Page(events: events, next: next)
    }
}
